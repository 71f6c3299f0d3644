"""An EAGLE-3 head read from its own checkpoint folder, in either format users download, checked against a target.

Two formats ship the same weights:

* SafeAILab/EAGLE's (`architectures: ["LlamaForCausalLMEagle3"]`): a Llama
  config at the top level plus `draft_vocab_size`; tensors `fc.weight`,
  `midlayer.{hidden_norm, input_layernorm, self_attn.*, post_attention_layernorm,
  mlp.*}`, `norm.weight`, `lm_head.weight`, `d2t`, `t2d` and, in some, no
  `embed_tokens.weight` (the target's embeddings are used then);
* vLLM's speculators format (`speculators_model_type: "eagle3"`): the layer's
  config under `transformer_layer_config`, `draft_vocab_size`,
  `norm_before_residual` (vLLM's default when absent: true),
  `target_hidden_size`; the layer's tensors under `layers.0.` instead of `midlayer.`.

The target layers it reads are the config's `eagle_aux_hidden_state_layer_ids`
(top level, or under `eagle_config` as NVIDIA's exports write it), else
vLLM's and SafeAILab's default (2, N // 2, N − 3) for a target of N layers:
depths in the seam's sense (runners/hidden.py), the input of those layers.

The layer is the target family's own decoder-layer class (its attention,
MLP, norms and rotary embedding), built at the head's sizes, with the query,
key and value projections widened to read `[norm(embedding), norm(feature)]`
(2 × hidden), as every EAGLE-3 checkpoint stores them. `check_head` reads
only the config and the safetensors header: a head for another target
(hidden size, vocabulary, layer ids), a missing `d2t` or a truncated file is
one line before any weights load.
"""

from __future__ import annotations

import copy
import inspect
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import torch
from torch import nn

from ...errors import InvalidParameter
from .head_files import head_config, target_fields

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel
    from . import TargetConfig

SAFEAILAB_ARCH = "LlamaForCausalLMEagle3"
SPECULATORS_TYPE = "eagle3"
_FILE = "model.safetensors"
_LAYER_PREFIXES = ("midlayer.", "layers.0.")


def is_eagle3_config(cfg: dict[str, Any]) -> bool:
    """Whether a config.json is an EAGLE-3 head's, in either format."""
    return SAFEAILAB_ARCH in (cfg.get("architectures") or []) or cfg.get("speculators_model_type") == SPECULATORS_TYPE


@dataclass(frozen=True)
class HeadSpec:
    """What a head's files say, before its weights load."""

    folder: Path
    layer_config: dict[str, Any]   # the decoder layer's own config (hidden, heads, intermediate, eps, rope)
    draft_vocab: int
    vocab: int                     # the target vocabulary the head's d2t maps into
    layer_ids: tuple[int, ...]     # target depths read (low, mid, high); () = the default for the target
    norm_before_residual: bool
    fmt: str                       # "safeailab" or "speculators"

    def depths(self, target_layers: int) -> tuple[int, ...]:
        return self.layer_ids or (2, target_layers // 2, target_layers - 3)


def _fail(folder: Path, what: str) -> InvalidParameter:
    return InvalidParameter(f"EAGLE-3 head {folder}: {what}")


def _header(path: Path) -> dict[str, Any]:
    """The safetensors header (names, dtypes, shapes, offsets), checked against the file's size."""
    try:
        with open(path, "rb") as f:
            raw = f.read(8)
            if len(raw) < 8:
                raise ValueError("shorter than a header")
            (n,) = struct.unpack("<Q", raw)
            head = json.loads(f.read(n))
            size = path.stat().st_size
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise _fail(path.parent, f"{path.name} is not a readable safetensors file ({e})") from None
    end = max((v["data_offsets"][1] for k, v in head.items() if k != "__metadata__"), default=0)
    if 8 + n + end > size:
        raise _fail(path.parent, f"{path.name} is truncated ({size} bytes, its header needs {8 + n + end})")
    return {k: v for k, v in head.items() if k != "__metadata__"}


def read_spec(folder: str | Path) -> HeadSpec:
    """The head's config, or one line: not a folder, no config, not an EAGLE-3 config."""
    root, cfg = head_config(folder, "EAGLE-3 head", "the folder an EAGLE-3 head was downloaded to")
    if not is_eagle3_config(cfg):
        raise _fail(root, f"config.json is not an EAGLE-3 head's (architectures {SAFEAILAB_ARCH} or "
                          f"speculators_model_type {SPECULATORS_TYPE!r})")
    speculators = cfg.get("speculators_model_type") == SPECULATORS_TYPE
    layer = dict(cfg.get("transformer_layer_config") or {}) if speculators else dict(cfg)
    ids = cfg.get("eagle_aux_hidden_state_layer_ids") or (cfg.get("eagle_config") or {}).get(
        "eagle_aux_hidden_state_layer_ids") or ()
    try:
        spec = HeadSpec(root, layer, int(cfg["draft_vocab_size"]), int(layer["vocab_size"]),
                        tuple(int(i) for i in ids), bool(cfg.get("norm_before_residual", speculators)),
                        "speculators" if speculators else "safeailab")
        for k in ("hidden_size", "num_attention_heads", "intermediate_size"):
            int(layer[k])
    except (KeyError, TypeError, ValueError) as e:
        raise _fail(root, f"config.json lacks a field an EAGLE-3 head needs ({e})") from None
    return spec


def check_head(folder: str | Path, target_cfg: TargetConfig) -> HeadSpec:
    """The head's spec checked against the target's config (a dict or a PretrainedConfig), reading no weights."""
    spec = read_spec(folder)
    get = target_fields(target_cfg)
    root = spec.folder
    t_hidden, t_vocab, t_layers = (int(get(k) or 0) for k in ("hidden_size", "vocab_size", "num_hidden_layers"))
    if spec.vocab != t_vocab:
        raise _fail(root, f"maps into a vocabulary of {spec.vocab} tokens, the target has {t_vocab}: a head for "
                          "another target")
    bad = [d for d in spec.depths(int(t_layers)) if not 0 <= d <= int(t_layers)]
    if len(spec.depths(int(t_layers))) != 3 or bad:
        raise _fail(root, f"reads target layers {list(spec.depths(int(t_layers)))}, the target has {t_layers} "
                          "layers (three depths from 0 to that are needed)")
    path = root / _FILE
    if not path.exists():
        other = sorted(p.name for p in root.glob("*.bin"))
        raise _fail(root, f"no {_FILE} there" + (f" ({other[0]} is pickle; convert it to safetensors)"
                                                 if other else ""))
    head = _header(path)
    hidden = int(spec.layer_config["hidden_size"])
    fc = head.get("fc.weight")
    if fc is None or fc["shape"] != [hidden, 3 * int(t_hidden)]:
        got = fc["shape"] if fc else "missing"
        raise _fail(root, f"fc.weight is {got}, a head for a target of hidden size {t_hidden} has "
                          f"[{hidden}, {3 * int(t_hidden)}]")
    if "d2t" not in head:
        raise _fail(root, "no d2t tensor (the map from its draft vocabulary to the target's ids)")
    if head["d2t"]["shape"] != [spec.draft_vocab]:
        raise _fail(root, f"d2t has shape {head['d2t']['shape']}, draft_vocab_size is {spec.draft_vocab}")
    if "embed_tokens.weight" not in head and hidden != int(t_hidden):
        raise _fail(root, f"has no embed_tokens and its hidden size {hidden} is not the target's {t_hidden}")
    if not any(k.startswith(_LAYER_PREFIXES) for k in head):
        raise _fail(root, "no decoder layer tensors (midlayer.* or layers.0.*)")
    return spec


class _DecoderStack(Protocol):
    """What `_family` reads of the target's decoder stack (`get_decoder()`: a Llama-like base model)."""

    layers: torch.nn.ModuleList
    rotary_emb: torch.nn.Module


def _family(kind: str, tcfg: PretrainedConfig, decoder: _DecoderStack) -> tuple[type, type, PretrainedConfig]:
    """(decoder-layer class, rotary class, a config to build them from) of the head's own family: the target's
    own classes when the head names the target's family (or none), else that family's in transformers (every
    released EAGLE-3 head is a Llama layer, whatever its target: vLLM and SGLang build them so too)."""
    if kind == tcfg.model_type:
        return type(decoder.layers[0]), type(decoder.rotary_emb), copy.deepcopy(tcfg)
    import sys

    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    try:   # the family's classes through transformers' own config → model map, not a module named by a string
        cfg = AutoConfig.for_model(kind)
        module = sys.modules[MODEL_FOR_CAUSAL_LM_MAPPING[type(cfg)].__module__]
        layer = next(getattr(module, n) for n in dir(module) if n.endswith("DecoderLayer"))
        rotary = next(getattr(module, n) for n in dir(module) if n.endswith("RotaryEmbedding"))
    except (ImportError, StopIteration, ValueError, KeyError):
        raise InvalidParameter(f"an EAGLE-3 head with a {kind!r} layer: this transformers has no such decoder "
                               "layer") from None
    cfg.vocab_size = tcfg.vocab_size
    return layer, rotary, cfg


class HeadCache:
    """The head's one layer of keys and values, (1, kv_heads, length, head_dim) each: what its attention's
    `cache.update` appends to, and `crop` cuts back when the target's rewind drops positions."""

    def __init__(self) -> None:
        self.k: torch.Tensor | None = None
        self.v: torch.Tensor | None = None

    def update(self, k: torch.Tensor, v: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any
               ) -> tuple[torch.Tensor, torch.Tensor]:
        self.k = k if self.k is None else torch.cat((self.k, k), dim=2)
        self.v = v if self.v is None else torch.cat((self.v, v), dim=2)
        return self.k, self.v

    @property
    def length(self) -> int:
        return 0 if self.k is None else int(self.k.shape[2])

    def crop(self, n: int) -> None:
        if self.k is not None and self.v is not None:
            self.k, self.v = self.k[:, :, :n], self.v[:, :, :n]


class Eagle3Head(nn.Module):
    """The head's modules: fc, the layer (the target family's class), final norm, lm_head over the draft
    vocabulary, embeddings (its own or the target's) and d2t as target ids."""

    def __init__(self, target: PreTrainedModel, spec: HeadSpec):
        super().__init__()
        tcfg = target.config.get_text_config() if hasattr(target.config, "get_text_config") else target.config
        decoder = target.get_decoder()
        kind = str(spec.layer_config.get("model_type") or tcfg.model_type)
        layer_cls, rotary_cls, cfg = _family(kind, tcfg, decoder)
        for k, v in spec.layer_config.items():
            if k in ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                     "rms_norm_eps", "rope_theta", "rope_parameters", "rope_scaling", "hidden_act"):
                setattr(cfg, k, v)
        if "head_dim" not in spec.layer_config:
            cfg.head_dim = int(cfg.hidden_size) // int(cfg.num_attention_heads)
        cfg.num_hidden_layers = 1
        cfg._attn_implementation = "sdpa"
        hidden = int(cfg.hidden_size)
        self.layer = layer_cls(cfg, 0)
        attn = self.layer.self_attn
        # transformers 5.24 renames the attention's `past_key_values` to `cache` family by family
        self._cache_arg = "cache" if "cache" in inspect.signature(attn.forward).parameters else "past_key_values"
        for name in ("q_proj", "k_proj", "v_proj"):
            old = getattr(attn, name)
            setattr(attn, name, nn.Linear(2 * hidden, old.out_features, bias=old.bias is not None))
        norm_cls = type(self.layer.input_layernorm)
        self.hidden_norm = norm_cls(hidden, eps=cfg.rms_norm_eps)
        self.rotary = rotary_cls(config=cfg)
        self.fc = nn.Linear(3 * int(tcfg.hidden_size), hidden, bias=False)
        self.norm = norm_cls(hidden, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(hidden, spec.draft_vocab, bias=False)
        self.embed = decoder.embed_tokens   # replaced by the head's own below when it ships one
        self.norm_before_residual = spec.norm_before_residual
        self.to_target: torch.Tensor
        self.register_buffer("to_target", torch.zeros(spec.draft_vocab, dtype=torch.long), persistent=False)
        self._load(spec, target)

    def _load(self, spec: HeadSpec, target: PreTrainedModel) -> None:
        from safetensors.torch import load_file

        state = load_file(str(spec.folder / _FILE))
        d2t = state.pop("d2t").long()
        state.pop("t2d", None)
        self.to_target.copy_(torch.arange(spec.draft_vocab) + d2t)   # SafeAILab's and vLLM's: target = d + d2t[d]
        if int(self.to_target.min()) < 0 or int(self.to_target.max()) >= spec.vocab:
            raise _fail(spec.folder, "d2t maps draft ids outside the target's vocabulary")
        if "embed_tokens.weight" in state:
            w = state.pop("embed_tokens.weight")
            self.embed = nn.Embedding(w.shape[0], w.shape[1])
            self.embed.weight.data.copy_(w)
        mine: dict[str, torch.Tensor] = {}
        for k, v in state.items():
            for p in _LAYER_PREFIXES:
                if k.startswith(p):
                    k = k[len(p):]
                    k = "hidden_norm." + k[len("hidden_norm."):] if k.startswith("hidden_norm.") else "layer." + k
                    break
            mine[k] = v
        own = {k for k in self.state_dict() if not k.startswith("embed.") and not k.startswith("rotary.")}
        missing = sorted(own - set(mine))
        extra = sorted(set(mine) - own)
        if missing or extra:
            pre = "layers.0." if spec.fmt == "speculators" else "midlayer."

            def named(k: str) -> str:   # as the file names it
                return pre + k[len("layer."):] if k.startswith("layer.") else pre + k if k.startswith("hidden_") else k

            raise _fail(spec.folder, f"tensors do not fit an EAGLE-3 layer of this family: missing "
                                     f"{[named(k) for k in missing[:3]]}, unexpected {[named(k) for k in extra[:3]]}")
        try:
            self.load_state_dict(mine, strict=False)
        except RuntimeError as e:
            raise _fail(spec.folder, f"a tensor's shape does not fit ({str(e).splitlines()[-1].strip()})") from None
        self.to(device=target.device, dtype=target.dtype).eval()

    def step(self, feature: torch.Tensor, tokens: torch.Tensor, cache: HeadCache, start: int) -> torch.Tensor:
        """The layer over k positions start … start+k−1: `feature` (k, 3 × target hidden) fused by fc, or
        (k, hidden) a chained output; `tokens` (k,) the token after each. Returns the outputs (k, hidden)."""
        if feature.shape[-1] != self.norm.weight.shape[0]:
            feature = self.fc(feature)
        k = feature.shape[0]
        emb = self.layer.input_layernorm(self.embed(tokens.view(1, k)))
        h = feature.view(1, k, -1)
        if self.norm_before_residual:
            h = self.hidden_norm(h)
            residual = h
        else:
            residual = h
            h = self.hidden_norm(h)
        pos = torch.arange(start, start + k, device=h.device).view(1, k)
        mask = None
        if k > 1:
            full = torch.full((k, start + k), float("-inf"), device=h.device, dtype=h.dtype)
            mask = torch.triu(full, diagonal=start + 1).view(1, 1, k, start + k)
        attn, _ = self.layer.self_attn(hidden_states=torch.cat((emb, h), dim=-1),
                                       position_embeddings=self.rotary(h, pos), attention_mask=mask,
                                       **{self._cache_arg: cache})
        h = residual + attn
        h = h + self.layer.mlp(self.layer.post_attention_layernorm(h))
        return h[0]

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """The draft vocabulary's logits (draft_vocab,) of one output row, in float32."""
        return self.lm_head(self.norm(h)).float()


__all__ = ["Eagle3Head", "HeadCache", "HeadSpec", "check_head", "is_eagle3_config", "read_spec"]
