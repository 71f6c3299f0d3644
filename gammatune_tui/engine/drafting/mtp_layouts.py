"""Where each family keeps its multi-token-prediction (MTP) head in a checkpoint, and how to read it out.

transformers loads these checkpoints and *skips* the head (the families list
its keys in `_keys_to_ignore_on_load_unexpected`), so the tensors are read
here, straight from the folder's safetensors, and renamed onto transformers'
own `MtpLayer` (modeling_layers.py: `enorm`, `hnorm`, `eh_proj`,
`mtp_block.*` — one decoder layer of the family's own class — and
`post_norm`). The layouts, as the families ship them (transformers'
conversion mapping `MtpModel`, vLLM's `qwen3_5_mtp.py` / `qwen3_next_mtp.py`
/ `deepseek_mtp.py`):

* **mtp.** — Qwen3.5, Qwen3.5-MoE, Qwen3-Next, Mellum: one module
  `mtp.fc` (the 2H → H projection of [embedding; hidden]),
  `mtp.pre_fc_norm_embedding`, `mtp.pre_fc_norm_hidden`, `mtp.layers.0.*`
  (a decoder layer) and `mtp.norm` (the norm before the shared LM head);
* **layers.N+i** — DeepSeek-V3, GLM-4.5/4.7 (glm4_moe, glm4_moe_lite): the
  head is decoder layer N + i of `model.layers` (N = num_hidden_layers), with
  `enorm`, `hnorm`, `eh_proj` and `shared_head.norm` beside the layer's own
  tensors; `shared_head.head` and `embed_tokens` repeat the target's and are
  not read (the head shares the target's);
* **model.mtp_layers.i** — MiMo (vLLM's `mimo_mtp.py`): `token_layernorm`,
  `hidden_layernorm`, `input_proj`, `final_layernorm` beside the layer.

A folder without any of these gets one line (`ModelLoadError`, exit 2): it is
a checkpoint without a head, not a broken one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ModelLoadError
from ..common.mtp_families import FAMILY_LAYOUT, INDEXED_ATTENTION, head_families

if TYPE_CHECKING:
    from transformers import PretrainedConfig

# Which of the target's hidden states feeds each family's head. Every family above was trained on the
# last layer's output *after* the final norm: it is what transformers' MTPCandidateGenerator hands the
# head (`hidden_states[-1]`), what vLLM's target models return to their MTP proposers, and the fix of
# LightLLM PR #1402 (Qwen3.5-0.8B accepted length 1.80 → 2.74 when fed post-norm instead of pre-norm).
DEFAULT_FEED = "post"   # the other: "pre" (--mtp-pre-norm)


@dataclass(frozen=True)
class HeadTensors:
    """An MTP head read out of a checkpoint: its tensors named as `MtpModel`'s (`layers.i.…`), its layout,
    and how many MTP layers (depths) it has."""

    layout: str
    layers: int
    tensors: dict[str, Any]
    folder: Path


def _layer_rename(layout: str, n_hidden: int) -> list[tuple[re.Pattern[str], str]]:
    """(pattern, replacement) pairs, tried in order, that map a checkpoint key onto `MtpModel`'s names."""
    if layout == "mtp":
        return [(re.compile(r"^(?:model\.)?mtp\.fc\."), "layers.0.eh_proj."),
                (re.compile(r"^(?:model\.)?mtp\.pre_fc_norm_embedding\."), "layers.0.enorm."),
                (re.compile(r"^(?:model\.)?mtp\.pre_fc_norm_hidden\."), "layers.0.hnorm."),
                (re.compile(r"^(?:model\.)?mtp\.norm\."), "layers.0.post_norm."),
                (re.compile(r"^(?:model\.)?mtp\.layers\.(\d+)\."), r"layers.\1.mtp_block.")]
    if layout == "mimo":
        return [(re.compile(r"^model\.mtp_layers\.(\d+)\.token_layernorm\."), r"layers.\1.enorm."),
                (re.compile(r"^model\.mtp_layers\.(\d+)\.hidden_layernorm\."), r"layers.\1.hnorm."),
                (re.compile(r"^model\.mtp_layers\.(\d+)\.input_proj\."), r"layers.\1.eh_proj."),
                (re.compile(r"^model\.mtp_layers\.(\d+)\.final_layernorm\."), r"layers.\1.post_norm."),
                (re.compile(r"^model\.mtp_layers\.(\d+)\."), r"layers.\1.mtp_block.")]
    # layout "layers": model.layers.{n_hidden + i}.* — renumbered from 0 by `_renumber`
    return [(re.compile(r"^model\.layers\.(\d+)\.(enorm|hnorm|eh_proj)\."), r"layers.\1.\2."),
            (re.compile(r"^model\.layers\.(\d+)\.shared_head\.norm\."), r"layers.\1.post_norm."),
            (re.compile(r"^model\.layers\.(\d+)\."), r"layers.\1.mtp_block.")]


_SHARED = re.compile(r"\.(shared_head\.head|embed_tokens)\.")   # copies of the target's: not read


def _renumber(name: str, n_hidden: int) -> str:
    """`layers.61.x` → `layers.0.x` for a DeepSeek-layout head of a 61-layer target."""
    m = re.match(r"^layers\.(\d+)\.", name)
    return f"layers.{int(m.group(1)) - n_hidden}.{name[m.end():]}" if m else name


def _head_key(key: str, layout: str, n_hidden: int) -> bool:
    if layout == "layers":
        m = re.match(r"^model\.layers\.(\d+)\.", key)
        return m is not None and int(m.group(1)) >= n_hidden and not _SHARED.search(key)
    if layout == "mimo":
        return key.startswith("model.mtp_layers.")
    return bool(re.match(r"^(?:model\.)?mtp\.", key))


def text_config_of(config: PretrainedConfig) -> PretrainedConfig:
    return config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config


def layout_of(config: PretrainedConfig) -> str:
    """The layout of a family's heads, or one line: a family with indexed attention, or with no heads."""
    kind = str(getattr(text_config_of(config), "model_type", "") or getattr(config, "model_type", ""))
    if kind in INDEXED_ATTENTION or getattr(config, "model_type", "") in INDEXED_ATTENTION:
        raise ModelLoadError(f"{kind}: its MTP head (and the model) use indexed sparse attention, whose cache "
                             "gammatune does not keep yet; --draft mtp cannot run it")
    layout = FAMILY_LAYOUT.get(kind) or FAMILY_LAYOUT.get(str(getattr(config, "model_type", "")))
    if layout is None:
        known = ", ".join(head_families())
        raise ModelLoadError(f"{kind or 'this model'} ships no MTP head that gammatune can read "
                             f"(families with heads: {known})")
    return layout


def _weight_files(folder: Path) -> list[Path]:
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelLoadError(f"{index}: cannot read the weight index ({exc})") from None
        return [folder / n for n in names]
    return sorted(folder.glob("*.safetensors"))


def read_head(folder: str | Path, config: PretrainedConfig) -> HeadTensors:
    """The MTP tensors of the checkpoint in `folder`, renamed for `MtpModel`; one line if it has none."""
    from safetensors import safe_open

    folder = Path(folder)
    layout = layout_of(config)
    n_hidden = int(getattr(text_config_of(config), "num_hidden_layers"))
    files = _weight_files(folder) if folder.is_dir() else []
    if not files:
        raise ModelLoadError(f"{folder}: --draft mtp reads the head from the target's safetensors, and this "
                             "target has no local safetensors folder")
    rules = _layer_rename(layout, n_hidden)
    tensors: dict[str, Any] = {}
    for path in files:
        try:
            with safe_open(str(path), framework="pt", device="cpu") as f:
                for key in f.keys():
                    if not _head_key(key, layout, n_hidden):
                        continue
                    for pattern, repl in rules:
                        if pattern.match(key):
                            name = pattern.sub(repl, key, count=1)
                            tensors[_renumber(name, n_hidden) if layout == "layers" else name] = f.get_tensor(key)
                            break
        except Exception as exc:   # a truncated or foreign file (safetensors' own error is no OSError)
            raise ModelLoadError(f"{path}: cannot read its tensors ({str(exc).splitlines()[0]})") from None
    if not tensors:
        where = {"mtp": "mtp.*", "layers": f"model.layers.{n_hidden}.*", "mimo": "model.mtp_layers.*"}[layout]
        raise ModelLoadError(f"{folder}: this checkpoint carries no MTP head (no {where} tensors); "
                             "--draft mtp needs one (pick another drafter)")
    tensors = _fuse_experts(tensors)
    depths = sorted({int(k.split(".")[1]) for k in tensors})
    return HeadTensors(layout, len(depths), tensors, folder)


_EXPERT = re.compile(r"^(.*\.mlp\.experts)\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$")


def _fuse_experts(tensors: dict[str, Any]) -> dict[str, Any]:
    """Checkpoints store MoE experts one by one (`experts.E.gate_proj.weight` …); transformers' MoE layers
    hold them fused (`experts.gate_up_proj` (E, 2I, H), `experts.down_proj` (E, H, I)), as its own
    conversion mapping builds them at load."""
    import torch

    groups: dict[str, dict[int, dict[str, Any]]] = {}
    out: dict[str, Any] = {}
    for name, t in tensors.items():
        m = _EXPERT.match(name)
        if m:
            groups.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[m.group(3)] = t
        else:
            out[name] = t
    for prefix, experts in groups.items():
        order = [experts[e] for e in sorted(experts)]
        if any(len(e) != 3 for e in order) or sorted(experts) != list(range(len(order))):
            raise ModelLoadError(f"MTP head: the experts under {prefix} are incomplete in the checkpoint")
        out[prefix + ".gate_up_proj"] = torch.stack([torch.cat([e["gate_proj"], e["up_proj"]], 0) for e in order])
        out[prefix + ".down_proj"] = torch.stack([e["down_proj"] for e in order])
    return out
