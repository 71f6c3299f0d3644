"""`--draft dflash:PATH` (or a DFlash drafter's folder): a block drafter that reads the target's layers drafts.

DFlash (transformers' `DFlashTokenCandidateGenerator`, model type
`muse_glimmer_assistant`) keeps a small KV cache of *context*: the target's
rows at the layers its config lists (`target_layer_ids`, each the output of
that layer: depth id + 1 here, runners/hidden.py; for the last layer the row
after the final norm, as transformers' `hidden_states[N]` is), concatenated and projected
by its `encoder`. One forward over `[bonus, mask × (block_size − 1)]` at the
positions after the context then drafts a whole block at once: the block
attends to the context and to itself both ways, and the target's own LM head
scores each of its block_size − 1 positions (the embeddings and the LM head
are the target's; the drafter ships neither).

What is kept. After every verify the decoder hands the rows of the accepted
positions (`observe`); the next draft feeds them as context, then crops the
block's own entries, so the cache holds one entry per accepted position,
exactly what a fresh run over the accepted text would build, and rewinds
with the target's (`rows.start` below what it holds: the rest is cropped).

The law. Position i of a block is drafted from q_i, the softmax of its logits
(served through the session's temperature, top-k, top-p): the argmax when
greedy, a draw when sampled. q_i does not depend on the tokens drafted
before it in the block, which is still a proposal law the accept test
corrects to the target's (exact at every temperature). A policy's γ below
block_size − 1 keeps the block's first γ tokens; above it, a second block is
drafted from the first one's last token (no new context: the target has not
seen the first block yet), and so on.
"""

from __future__ import annotations

import inspect
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import torch

from . import Draft, DraftSource, SourceContext, chain_draft
from ..common.sampling import Served
from ..policies.policy_base import Policy
from ..runners.hidden import TargetReads, TargetRows
from .head_files import check_folder, head_config, head_folder, target_fields
from ...errors import InvalidParameter, ModelLoadError

if TYPE_CHECKING:
    from transformers import PreTrainedModel
    from transformers.models.muse_glimmer_assistant import MuseGlimmerAssistantModel   # what AutoModel builds
    from . import TargetConfig

MODEL_TYPE = "muse_glimmer_assistant"   # transformers' DFlash drafter (models/muse_glimmer_assistant)
# z-lab's own format (z-lab/dflash, dflash/model.py; its hub drafters load with trust_remote_code): a Qwen3 config
# with architectures ["DFlashDraftModel"] and the drafter's fields under "dflash_config"; the same network as
# transformers' port, whose context projection holds z-lab's `fc` and `hidden_norm`
ZLAB, ZLAB2 = "DFlashDraftModel", "DFlash2DraftModel"
ZLAB_KEYS = {"fc.": "encoder.fc.", "hidden_norm.": "encoder.output_norm_enc."}


def _folder(params: dict[str, Any]) -> str:
    return head_folder(params, "dflash_head", "dflash", "its drafter's folder")


def _fail(root: Path, why: str) -> InvalidParameter:
    return InvalidParameter(f"DFlash drafter {root}: {why}")


def read_config(folder: str) -> dict[str, Any]:
    """The drafter's config.json, or one line: not a folder, no config, not a DFlash drafter's."""
    root, cfg = head_config(folder, "DFlash drafter", "the folder a DFlash drafter was downloaded to")
    archs = cfg.get("architectures")
    if isinstance(archs, list) and ZLAB2 in archs:
        raise _fail(root, "z-lab's DFlash2 (a convolution and a candidate selector over the block) is not read "
                          "yet; its DFlash drafters and transformers' format are")
    if isinstance(archs, list) and ZLAB in archs and isinstance(cfg.get("dflash_config"), dict):
        # z-lab's format: its fields over the Qwen3 config's, in transformers' names
        cfg = {**{k: v for k, v in cfg.items() if k not in ("dflash_config", "auto_map", "architectures")},
               **cfg["dflash_config"], "model_type": MODEL_TYPE, "zlab": True}
    if cfg.get("model_type") != MODEL_TYPE:
        raise _fail(root, f"config.json is not a DFlash drafter's (model_type {MODEL_TYPE!r}, or z-lab's {ZLAB})")
    if not (root / "model.safetensors").is_file():
        raise _fail(root, "no model.safetensors there (gammatune reads safetensors only)")
    return cfg


def _zlab_model(root: Path, cfg: dict[str, Any], like: torch.Tensor) -> "MuseGlimmerAssistantModel":
    """A z-lab drafter as transformers' model, on `like`'s device and dtype: its config's fields that transformers'
    config has, and its tensors under transformers' names (strict: a missing or extra tensor is the caller's
    one-line refusal)."""
    from safetensors.torch import load_file
    from transformers import MuseGlimmerAssistantConfig, MuseGlimmerAssistantModel

    known = set(inspect.signature(MuseGlimmerAssistantConfig).parameters) | set(
        getattr(MuseGlimmerAssistantConfig, "__dataclass_fields__", {}))
    fields = {k: v for k, v in cfg.items() if k in known and k != "model_type" and v is not None}
    try:
        config = MuseGlimmerAssistantConfig(**fields)
    except Exception as e:   # huggingface_hub's strict validation raises its own error classes
        raise ValueError(f"its config does not fit transformers' DFlash drafter ({str(e).splitlines()[0]})") from None
    model: Any = MuseGlimmerAssistantModel(config)   # Any: transformers' wrapped `.to` does not type-check
    model.to(like.device, like.dtype)
    state = {next((new + k[len(old):] for old, new in ZLAB_KEYS.items() if k.startswith(old)), k): v
             for k, v in load_file(str(root / "model.safetensors")).items()}
    model.load_state_dict(state, strict=True)
    # z-lab's `compute_logits` scales the head's logits and may softcap them; its noise embeddings take a scale
    setattr(model, "zlab_scales", (float(cfg.get("output_multiplier") or 1.0),   # a plain attribute, not a tensor
                                   float(cfg.get("final_logit_softcapping") or 0),
                                   float(cfg.get("input_embedding_scale") or 1.0)))
    return model


def check_drafter(folder: str, target_cfg: TargetConfig) -> dict[str, Any]:
    """The drafter's config against the target's (a dict or a PretrainedConfig), reading no weights."""
    cfg = read_config(folder)
    root = Path(folder).expanduser()
    get = target_fields(target_cfg)
    layers, hidden, vocab = (int(get(k) or 0) for k in ("num_hidden_layers", "hidden_size", "vocab_size"))
    try:
        ids = [int(i) for i in cfg.get("target_layer_ids") or []]
        size, block, mask = int(cfg["hidden_size"]), int(cfg["block_size"]), int(cfg["mask_token_id"])
    except (KeyError, TypeError, ValueError) as e:
        raise _fail(root, f"config.json lacks a field a DFlash drafter needs ({e})") from None
    if size != hidden:
        raise _fail(root, f"its hidden size is {size}, the target's {hidden}: a drafter for another target")
    bad = [i for i in ids if not 0 <= i < layers]
    if not ids or bad:
        raise _fail(root, f"reads target layers {ids}, the target has {layers} layers: a drafter for another target")
    if not 0 <= mask < vocab or block < 2:
        raise _fail(root, f"mask token {mask} or block size {block} does not fit a target of {vocab} tokens")
    return cfg


_DRAFTERS: "weakref.WeakKeyDictionary[PreTrainedModel, dict[str, MuseGlimmerAssistantModel]]" = \
    weakref.WeakKeyDictionary()


def drafter_of(target: PreTrainedModel, folder: str) -> MuseGlimmerAssistantModel:
    """The drafter in `folder`, on the target's device and dtype, read once per loaded target (load_pair reads it,
    so a bad file is refused before anything runs; every session reuses it)."""
    found = _DRAFTERS.setdefault(target, {})
    if folder not in found:
        from transformers import AutoModel

        param = next(target.parameters())
        cfg = check_drafter(folder, target.config)
        root = Path(folder).expanduser()
        try:
            if cfg.get("zlab"):
                model = _zlab_model(root, cfg, param)
            else:
                model = AutoModel.from_pretrained(str(root), dtype=param.dtype, use_safetensors=True).to(param.device)
        except (OSError, ValueError, RuntimeError, TypeError) as e:
            raise ModelLoadError(f"DFlash drafter {folder}: cannot load it ({str(e).splitlines()[0]})") from None
        found[folder] = model.eval()
    return found[folder]


def describe(model: PreTrainedModel) -> str:
    """'dflash, block 16, layers 1/13/25': the subtitle's words for the drafter."""
    cfg = model.config
    return f"dflash, block {cfg.block_size}, layers {'/'.join(str(i) for i in cfg.target_layer_ids)}"


class _Block:
    """Where a draft stands: the current block's logits (block_size − 1, V), the index in it, its anchor's position."""

    def __init__(self, logits: torch.Tensor, anchor_pos: int):
        self.logits, self.i, self.anchor_pos = logits, 0, anchor_pos


class DFlashSource(DraftSource):
    """One session's DFlash drafting over the target's rows (see the module docstring)."""

    runner = None

    def __init__(self, target: PreTrainedModel, model: MuseGlimmerAssistantModel):
        from transformers.cache_utils import DFlashCache

        cfg = model.config
        self.target, self.model = target, model
        assert cfg.target_layer_ids is not None   # check_drafter refuses a drafter that names no target layers
        ids = [int(i) for i in cfg.target_layer_ids]
        last = int(target.config.get_text_config().num_hidden_layers) - 1
        if ids[-1] == last:   # transformers' hidden_states[N] (what DFlash reads for the last layer) is after the norm
            self.reads = TargetReads(layers=tuple(i + 1 for i in ids[:-1]), normed=True)
        else:
            self.reads = TargetReads(layers=tuple(i + 1 for i in ids))
        self.block, self.mask = int(cfg.block_size), int(cfg.mask_token_id)
        self.scales = getattr(model, "zlab_scales", (1.0, 0.0, 1.0))   # (logit multiplier, softcap, embedding scale)
        self.cache = DFlashCache(config=cfg)
        self.cache.activate_past_recording()   # sliding-window layers can still be cropped
        # the drafter's cache argument: `cache` since transformers 5.23 (`past_key_values` before, still accepted)
        self.cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self.done = 0                           # context positions the cache holds
        self.waiting: list[torch.Tensor] = []   # context rows of positions done … not fed yet

    @classmethod
    def create(cls, params: dict[str, Any], made: SourceContext) -> "DFlashSource":
        return cls(made.pair.target, drafter_of(made.pair.target, _folder(params)))

    @classmethod
    def prepare(cls, params: dict[str, Any], target: PreTrainedModel) -> str:
        return describe(drafter_of(target, _folder(params)))

    @classmethod
    def check_files(cls, params: dict[str, Any], target_config: TargetConfig | None) -> None:
        """The drafter's config against the target's: one line before weights load."""
        check_folder(_folder(params), target_config, read_config, check_drafter)

    def observe(self, rows: TargetRows) -> None:
        if rows.start == 0:   # the prefill's rows: a session's cache afresh
            self._reset()
            self.done, self.waiting = 0, []
        elif rows.start < self.done:   # positions the cache holds were a rejected window's
            self.cache.crop(rows.start - self.done)
            self.done, self.waiting = rows.start, []
        else:
            del self.waiting[rows.start - self.done:]
        self.waiting.extend(rows.hidden.flatten(1).unbind(0))   # the listed layers' rows, concatenated

    def _reset(self) -> None:
        from transformers.cache_utils import DFlashCache

        self.cache = DFlashCache(config=self.model.config)
        self.cache.activate_past_recording()

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        """The target's embeddings of the block's ids, without a scaling norm (as transformers feeds DFlash)."""
        emb = self.target.get_input_embeddings()
        norm = getattr(emb, "embed_norm", None)
        if norm is None:
            return emb(ids) * self.scales[2]
        emb.embed_norm = torch.nn.Identity()
        try:
            return emb(ids) * self.scales[2]
        finally:
            emb.embed_norm = norm

    def _block_logits(self, anchor: int, anchor_pos: int) -> torch.Tensor:
        """One forward: the waiting rows into the cache as context, then `[anchor, mask …]` from `anchor_pos`; the
        block's logits (block_size − 1, V) in float32. The block's own entries leave the cache again."""
        return self._logits(self._block(anchor, anchor_pos))

    def _block(self, anchor: int, anchor_pos: int) -> torch.Tensor:
        """The drafter's forward (`_block_logits` before the head): the block's output rows (1, block_size, H)."""
        dev = next(self.model.parameters()).device
        n = len(self.waiting)
        width = self.model.encoder.fc.in_features
        ctx = (torch.stack(self.waiting).unsqueeze(0) if n else torch.zeros(1, 0, width)).to(dev, self.model.dtype)
        ids = torch.tensor([[anchor] + [self.mask] * (self.block - 1)], device=dev)
        pos = torch.arange(anchor_pos - n, anchor_pos + self.block, device=dev).unsqueeze(0)
        self.cache.set_previous_accepted_tokens(n)
        out = self.model(noise_embeds=self._embed(ids).to(self.model.dtype), context_hidden_states=ctx,
                         position_ids=pos, **{self.cache_kw: self.cache}).last_hidden_state
        self.cache.crop(-self.block)   # the block's entries: speculative; the context stays
        self.done += n
        self.waiting = []
        return out

    def _logits(self, out: torch.Tensor) -> torch.Tensor:
        """The target's LM head over the block's drafted positions (all but the anchor), scaled as the drafter's
        format asks: (block_size − 1, V) in float32."""
        head = self.target.get_output_embeddings()
        logits = head(out[0, 1:].to(head.weight.dtype)).float() * self.scales[0]
        cap = self.scales[1]
        return torch.tanh(logits / cap) * cap if cap > 0 else logits

    def step_parts(self, ids: list[int], served: Served) -> dict[str, Callable[[], object]]:
        """A block's two parts: the drafter's forward over the block, and the target's LM head over its drafted
        positions (after the waiting context is fed once, so each timed run leaves the cache as it was)."""
        if not (self.waiting or self.done):
            return {}
        with torch.inference_mode():
            out = self._block(ids[-1], len(ids) - 1)   # feeds the waiting context; later runs feed none

        def block() -> object:
            with torch.inference_mode():
                return self._block(ids[-1], len(ids) - 1)

        def head() -> object:
            with torch.inference_mode():
                return self._logits(out)

        return {f"the drafter's forward over a block of {self.block}": block,
                f"the target's head over its {self.block - 1} drafted positions": head}

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        if window <= 0 or not (self.waiting or self.done):   # a one-token prompt: no context yet
            return Draft()
        with torch.inference_mode():
            start = _Block(self._block_logits(ids[-1], len(ids) - 1), len(ids) - 1)

            def law(b: _Block) -> torch.Tensor:
                row = b.logits[b.i]
                return torch.softmax(row, dim=-1) if served.greedy else served.probs(row.unsqueeze(0))[0]

            def advance(b: _Block, x: int) -> _Block:
                if b.i + 1 < len(b.logits):
                    b.i += 1
                    return b
                pos = b.anchor_pos + self.block - 1   # a second block, anchored on the first one's last token
                return _Block(self._block_logits(x, pos), pos)

            calls = 0

            def counted(b: _Block) -> torch.Tensor:
                nonlocal calls
                calls += b.i == 0   # one drafter forward per block
                return law(b)

            out = chain_draft(start, window, counted, advance, served=served, gen=gen, policy=policy, eos=eos)
            out.calls = calls
            return out


__all__ = ["DFlashSource", "MODEL_TYPE", "check_drafter", "describe", "drafter_of", "read_config"]
