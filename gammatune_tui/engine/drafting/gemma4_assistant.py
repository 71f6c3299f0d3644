"""`--draft gemma4-assistant:PATH` (or an assistant's folder): the Gemma 4 assistant, a drafter over the target's keys.

Each Gemma 4 target ships a small `*-it-assistant` checkpoint (transformers'
`Gemma4AssistantForCausalLM`, model type `gemma4_assistant`, and its
`gemma4_unified_assistant` twin). It keeps no cache of its own: its four
layers cross-attend to the keys and values of the target's last full-attention
and last sliding-window layer (the "store" layers of the target's
`kv_sharing_modes`), read through the seam (runners/hidden.py `TargetReads.kv`)
as the target's cache holds them after each step. A draft step is one forward
of one token at a fixed position, the bonus token's, whatever the depth:

    input   [the target's embedding of the last token ; the last hidden state]
            first the target's row (after the final norm) that chose that token,
            then the assistant's own projected output (`post_projection`)
    logits  its LM head, or, with `use_ordered_embeddings`, the scores of the
            tokens of its top centroids only (the rest one below the lowest):
            always in the target's vocabulary, the map is the head's own

as transformers' `SinglePositionMultiTokenCandidateGenerator` runs it.

Two differences from transformers, both on purpose:
- the keys and values are the accepted positions' (0 … the bonus's − 1).
  After a verify that rejected a draft, transformers slices the target's
  returned states to the new length, which keeps the rejected draft's own
  entry at the bonus position (its `shared_kv_states[…][:current_length]`);
  after the prefill or a window accepted whole the two agree exactly
  (tests/engine/test_gemma4_assistant.py compares them there);
- sampled, a token is drawn from q, the law of the logits served at the
  session's temperature, and q goes to the accept test. transformers drafts
  the argmax and hands the raw logits to its accept test, which then
  over-accepts the argmax (P(x) = min(1, p(x)/q(x)), not p(x)): not exact at
  T > 0. The test shows both laws.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any, Callable

import torch

from . import Draft, DraftSource, SourceContext, chain_draft
from ..common.sampling import Served
from ..policies.policy_base import Policy
from ..runners.hidden import TargetReads, TargetRows
from .head_files import check_folder, head_config, head_folder, target_fields
from ...errors import InvalidParameter, ModelLoadError

MODEL_TYPES = ("gemma4_assistant", "gemma4_unified_assistant")
TARGET_TYPES = ("gemma4_text", "gemma4_unified_text", "gemma3n_text")   # targets that keep "store" layers


def _folder(params: dict[str, Any]) -> str:
    return head_folder(params, "assistant_head", "gemma4-assistant", "the assistant's folder")


def _fail(root: Path, why: str) -> InvalidParameter:
    return InvalidParameter(f"Gemma 4 assistant {root}: {why}")


def read_config(folder: str) -> dict[str, Any]:
    """The assistant's config.json, or one line: not a folder, no config, not an assistant's, no safetensors."""
    root, cfg = head_config(folder, "Gemma 4 assistant", "the folder the assistant was downloaded to")
    if cfg.get("model_type") not in MODEL_TYPES:
        raise _fail(root, f"config.json is not a Gemma 4 assistant's (model_type {' or '.join(MODEL_TYPES)})")
    if not any((root / f).is_file() for f in ("model.safetensors", "model.safetensors.index.json")):
        raise _fail(root, "no model.safetensors there (gammatune reads safetensors only)")
    return cfg


def store_layers(target_cfg: Any) -> dict[str, int]:
    """{layer type: the layer whose keys and values the assistant reads}: the last layer of each type before the
    target's KV-sharing layers (what Gemma 4's `kv_sharing_modes` marks "store"). `target_cfg` is the text config."""
    get = target_fields(target_cfg)
    types = list(get("layer_types") or [])
    n = int(get("num_hidden_layers") or len(types))
    own = n - int(get("num_kv_shared_layers") or 0)
    return {t: max(i for i in range(own) if types[i] == t) for t in dict.fromkeys(types[:own])}


def check_assistant(folder: str, target_cfg: Any) -> dict[str, Any]:
    """The assistant's config against the target's (a dict or a PretrainedConfig), reading no weights."""
    cfg = read_config(folder)
    root = Path(folder).expanduser()
    get = target_fields(target_cfg)
    kind = str(get("model_type") or "")
    if kind not in TARGET_TYPES:
        raise _fail(root, f"it drafts for a Gemma 4 target, which keeps the keys it reads; this target is {kind!r}")
    text = cfg.get("text_config") or {}
    hidden, vocab = int(get("hidden_size") or 0), int(get("vocab_size") or 0)
    if int(cfg.get("backbone_hidden_size") or 0) != hidden:
        raise _fail(root, f"it was trained on a target {cfg.get('backbone_hidden_size')} wide, this one is {hidden}: "
                          "an assistant for another target")
    if int(text.get("vocab_size") or 0) != vocab:
        raise _fail(root, f"its vocabulary has {text.get('vocab_size')} tokens, the target's {vocab}")
    missing = set(text.get("layer_types") or []) - set(store_layers({k: get(k) for k in (
        "layer_types", "num_hidden_layers", "num_kv_shared_layers")}))
    if missing:
        raise _fail(root, f"its layers read {sorted(missing)} keys, which the target has no layer of")
    return cfg


def _check_shapes(root: Path, target: Any, model: Any) -> None:
    """Each assistant layer reads the target store layer of its type: head size and key-value heads must agree."""
    text = target.config.get_text_config()
    layers = target.get_decoder().layers
    for i, layer in enumerate(model.model.layers):
        kind = model.config.get_text_config().layer_types[i]
        mine = layer.self_attn
        theirs = layers[store_layers(text)[kind]].self_attn
        kv_heads = mine.config.num_attention_heads // mine.num_key_value_groups
        if mine.head_dim != theirs.head_dim or kv_heads * mine.head_dim != theirs.k_proj.out_features:
            raise _fail(root, f"its layer {i} ({kind}) reads {kv_heads} heads of {mine.head_dim}, the target's "
                              f"{theirs.k_proj.out_features // theirs.head_dim} of {theirs.head_dim}: an assistant "
                              "for another target")


_ASSISTANTS: "weakref.WeakKeyDictionary[Any, dict[str, Any]]" = weakref.WeakKeyDictionary()


def assistant_of(target: Any, folder: str) -> Any:
    """The assistant in `folder`, on the target's device and dtype, read once per loaded target (load_pair reads
    it, so a bad file is refused before anything runs; every session reuses it)."""
    found = _ASSISTANTS.setdefault(target, {})
    if folder not in found:
        from transformers import AutoModelForCausalLM

        check_assistant(folder, target.config)
        root = Path(folder).expanduser()
        param = next(target.parameters())
        try:
            model = AutoModelForCausalLM.from_pretrained(str(root), dtype=param.dtype, use_safetensors=True)
        except (OSError, ValueError, RuntimeError) as e:
            raise ModelLoadError(f"Gemma 4 assistant {folder}: cannot load it ({str(e).splitlines()[0]})") from None
        _check_shapes(root, target, model)
        found[folder] = model.to(param.device).eval()
    return found[folder]


def describe(model: Any) -> str:
    """'Gemma 4 assistant, 4 layers, 2048 centroids': the subtitle's words for the assistant."""
    cfg = model.config
    words = f"Gemma 4 assistant, {cfg.get_text_config().num_hidden_layers} layers"
    return words + (f", {cfg.num_centroids} centroids" if cfg.use_ordered_embeddings else "")


class Gemma4AssistantSource(DraftSource):
    """One session's drafting by the assistant over the target's keys (see the module docstring)."""

    runner = None

    def __init__(self, target: Any, model: Any):
        self.target, self.model = target, model
        stores = store_layers(target.config.get_text_config())
        self.types = tuple(stores)
        self.reads = TargetReads(normed=True, kv=tuple(stores.values()))
        self.row: torch.Tensor | None = None   # the target's normed row that chose the last token
        self.kv: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self.end = 0                            # positions the keys cover (the last token's position)

    @classmethod
    def create(cls, params: dict[str, Any], made: SourceContext) -> "Gemma4AssistantSource":
        return cls(made.pair.target, assistant_of(made.pair.target, _folder(params)))

    @classmethod
    def prepare(cls, params: dict[str, Any], target: Any) -> str:
        return describe(assistant_of(target, _folder(params)))

    @classmethod
    def check_files(cls, params: dict[str, Any], target_config: Any) -> None:
        check_folder(_folder(params), target_config, read_config, check_assistant)

    def observe(self, rows: TargetRows) -> None:
        if len(rows):
            self.row = rows.hidden[-1, 0]
        self.kv = dict(zip(self.types, rows.kv))
        # the keys' length, not rows.end: past a target's KV-sharing layers the prefill keeps the last row only
        # (the longest layer's: a sliding layer's cache may keep its window only)
        self.end = max(int(keys.shape[-2]) for keys, _ in rows.kv)

    def _step(self, token: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One assistant forward at the bonus position: (logits (V,) in float32, its projected hidden state)."""
        dev, dtype = hidden.device, self.model.dtype
        emb = self.target.get_input_embeddings()(torch.tensor([[token]], device=dev))
        out = self.model(inputs_embeds=torch.cat([emb, hidden.view(1, 1, -1)], -1).to(dtype),
                         attention_mask=torch.ones(1, self.end + 1, dtype=torch.long, device=dev),
                         position_ids=torch.tensor([[self.end]], device=dev),
                         shared_kv_states=self.kv, use_cache=False)
        return out.logits[0, -1].float(), out.last_hidden_state[0, -1]

    def _layers(self, token: int, hidden: torch.Tensor) -> torch.Tensor:
        """The forward's first part, as transformers' `Gemma4AssistantForCausalLM.forward` runs it: the input
        projected, the layers over the target's keys: their last hidden state (1, 1, H), before any head."""
        m, dev = self.model, hidden.device
        emb = self.target.get_input_embeddings()(torch.tensor([[token]], device=dev))
        x = m.pre_projection(torch.cat([emb, hidden.view(1, 1, -1)], -1).to(m.dtype))
        masks = m.create_attention_masks(x, torch.ones(1, self.end + 1, dtype=torch.long, device=dev), self.kv)
        return m.model(inputs_embeds=x, attention_mask=masks, position_ids=torch.tensor([[self.end]], device=dev),
                       shared_kv_states=self.kv, use_cache=False).last_hidden_state

    def _chosen(self, last: torch.Tensor) -> torch.Tensor:
        """The centroid scoring: the ids of the tokens of the top centroids (1, 1, top_k × tokens per centroid)."""
        me = self.model.masked_embedding
        top = torch.topk(me.centroids(last), k=me.centroid_intermediate_top_k, dim=-1).indices
        return me.token_ordering.long().view(me.num_centroids, -1)[top].view(1, 1, -1)

    def _gathered(self, last: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """The chosen tokens' rows of the LM head scored, the rest one below the lowest: (1, 1, V), as the masked
        embedder scatters them."""
        scores = (last.unsqueeze(-2) @ self.model.lm_head.weight[chosen.view(-1)].T.unsqueeze(0)).squeeze(-2)
        out = torch.full((1, 1, self.model.vocab_size), scores.min().item() - 1.0, dtype=last.dtype,
                         device=last.device)
        return out.scatter_(-1, chosen, scores)

    def step_parts(self, ids: list[int], served: Served) -> dict[str, Callable[[], object]]:
        """One draft step's parts: the assistant's layers (the input projection, its layers over the target's keys),
        then its map into the target's vocabulary, with the softmax: with ordered embeddings the centroid scoring
        (which centroids) and the gather (the scores of their tokens' LM-head rows, scattered over the vocabulary);
        else its plain LM head. The output projection that feeds the next step is the layers' (cheap, H × H')."""
        if self.row is None:
            return {}
        row, token = self.row, ids[-1]
        with torch.inference_mode():
            last = self._layers(token, row)
            chosen = self._chosen(last) if self.model.config.use_ordered_embeddings else None

        def law(logits: torch.Tensor) -> torch.Tensor:
            row = logits[0, -1].float()
            return torch.softmax(row, dim=-1) if served.greedy else served.probs(row.unsqueeze(0))[0]

        def layers() -> object:
            with torch.inference_mode():
                return self.model.post_projection(self._layers(token, row))

        parts: dict[str, Callable[[], object]] = {
            f"its {self.model.config.get_text_config().num_hidden_layers} layers": layers}
        vocab = f"{self.model.vocab_size:,}"
        if chosen is None:
            def head() -> object:
                with torch.inference_mode():
                    return law(self.model.lm_head(last))
            parts[f"its LM head over {vocab} tokens"] = head
            return parts
        me = self.model.masked_embedding

        def scoring() -> object:
            with torch.inference_mode():
                return self._chosen(last)

        def gather() -> object:
            with torch.inference_mode():
                return law(self._gathered(last, chosen))

        parts[f"its scoring of {me.num_centroids:,} centroids"] = scoring
        parts[f"its gather over the top {me.centroid_intermediate_top_k} centroids' {chosen.shape[-1]:,} tokens "
              f"(of {vocab})"] = gather
        return parts

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        if window <= 0 or self.row is None:   # a one-token prompt: nothing of the target read yet
            return Draft()
        assert self.end == len(ids) - 1, "the keys cover every position before the last token"
        with torch.inference_mode():
            def law(state: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
                row = state[0]
                return torch.softmax(row, dim=-1) if served.greedy else served.probs(row.unsqueeze(0))[0]

            def advance(state: tuple[torch.Tensor, torch.Tensor], x: int) -> tuple[torch.Tensor, torch.Tensor]:
                return self._step(x, state[1])

            return chain_draft(self._step(ids[-1], self.row), window, law, advance, served=served, gen=gen,
                               policy=policy, eos=eos)


__all__ = ["Gemma4AssistantSource", "MODEL_TYPES", "assistant_of", "check_assistant", "describe", "read_config",
           "store_layers"]
