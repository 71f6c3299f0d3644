"""`doctor --for`'s command when the winning draft is not a draft model: an MTP or EAGLE-3 head, prompt lookup.

What each engine calls a source is in the source's row (engine/common/names.py
`serve_as`), so this module names no source. The window knob stays the one
the engine's grid plays (vLLM's `num_speculative_tokens`, SGLang's
`--speculative-num-steps`, llama.cpp's `--spec-draft-n-max`): the setting
ranked is the setting printed. The shapes, from the engines' docs and sources
(docs/deploy.md quotes them):

* vLLM: `--speculative-config '{"method": M, "num_speculative_tokens": K}'`,
  with `"model": HEAD` for a head in its own folder and the n-gram sizes for
  lookup. For the head inside the target's checkpoint (method `mtp`),
  vllm/config/speculative.py rejects a K above the head's layer count
  (n_predict) that is not a multiple of it: "num_speculative_tokens:K must
  be divisible by n_predict=N"; a one-layer head (Qwen3.5, DeepSeek-V3,
  Mellum) takes any K.
* SGLang: `--speculative-algorithm A` with EAGLE's knobs (topk 1,
  num-draft-tokens = steps + 1), and `--speculative-draft-model-path HEAD`
  for a head in its own folder; a block drafter (DFlash: its config has a
  `block_size`) drafts its whole block, `--speculative-num-draft-tokens`
  set to that size, as SGLang's DFLASH takes it.
* llama.cpp: `--spec-type T` with the n-max / n-min / p-min knobs; the head
  inside the GGUF needs no -md, a head in its own folder is `-md` (its
  GGUF, by the folder's name); a block drafter's n-max above its block - 1
  is clamped there (common/speculative.cpp at 001d906), which the line says.
* transformers: the `generate` argument (for its MTP path, γ is fixed to
  the head's layer count).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from ...engine.common.names import BY_SOURCE, SourceSpec, head_source
from ...engine.drafting.draft_sources import DrafterSettings, folder_config
from .engines import BY_NAME, Setting

LAYER_KEYS = ("mtp_num_hidden_layers", "num_nextn_predict_layers", "num_mtp_layers")


def named_draft(settings: DrafterSettings, name_draft: str) -> str:
    """How a pair's draft is named for the commands: the draft model's name, or its source (`eagle3:HEAD`)."""
    if settings.loads_draft:
        return name_draft
    folder = settings.params().get(settings.spec.head_param) if settings.spec.head_param else None
    return f"{settings.name}:{folder}" if folder else settings.name


def source_of(draft: str) -> tuple[SourceSpec, str] | None:
    """(the source's row, its head folder or "") when `draft` names a source without a draft model, else None."""
    head = head_source(draft, folder_config(draft))   # `eagle3:PATH`, or a head's folder given as a path
    if head is not None:
        return BY_SOURCE[head[0]], head[1]
    spec = BY_SOURCE.get(draft.strip().lower())
    return (spec, "") if spec is not None and not spec.loads_draft else None


def head_layers(target: str) -> int:
    """The MTP head's layer count from the target folder's config.json (1 where it is not there to read)."""
    try:
        cfg = json.loads((Path(target) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 1
    cfg = cfg.get("text_config", cfg) if isinstance(cfg, dict) else {}
    return next((int(cfg[k]) for k in LAYER_KEYS if isinstance(cfg.get(k), int) and cfg[k] > 0), 1)


def _block_size(folder: str) -> int:
    """A block drafter's block size from its folder's config.json (0: not a block drafter, or not readable)."""
    cfg = folder_config(folder) if folder else None
    value = cfg.get("block_size") if cfg else None
    return int(value) if isinstance(value, int) and value > 1 else 0


def _k(s: Setting) -> int:
    k = s.knobs
    return int(k.get("num_speculative_tokens") or k.get("speculative_num_steps") or k.get("n_max")
               or k.get("num_assistant_tokens") or 1)


def source_command(engine: str, target: str, draft: str, s: Setting) -> str | None:
    """The command that runs setting `s` of `engine` with the source `draft` names; None when `draft` is a draft
    model (the engine's own command applies)."""
    found = source_of(draft)
    if found is None:
        return None
    spec, folder = found
    name = dict(spec.serve_as).get(engine)
    if name is None:
        return f"{BY_NAME[engine].title} runs no {spec.name} source (docs/deploy.md); serve another draft there"
    own_head = not spec.point_mass and not spec.head_param   # the head inside the target's own checkpoint
    k, t = _k(s), shlex.quote(target)
    if engine == "vllm":
        config: dict[str, Any] = {"method": name, **({"model": folder} if folder else {}),
                                  **({"prompt_lookup_max": 4, "prompt_lookup_min": 1} if spec.point_mass else {}),
                                  "num_speculative_tokens": k}
        line = f"vllm serve {t} --speculative-config {shlex.quote(json.dumps(config))}"
        n = head_layers(target) if own_head else 1
        return line + (f"   # vLLM refuses this K: num_speculative_tokens:{k} must be divisible by n_predict={n}"
                       if k > n and k % n else "")
    if engine == "sglang":
        head = f" --speculative-draft-model-path {shlex.quote(folder)}" if folder else ""
        block = _block_size(folder)
        if block:   # a block drafter: SGLang drafts its whole block (--speculative-num-draft-tokens = block size)
            return (f"python -m sglang.launch_server --model-path {t} --speculative-algorithm {name}{head} "
                    f"--speculative-num-draft-tokens {block}   # the drafter's block; K={k} is gammatune's")
        return (f"python -m sglang.launch_server --model-path {t} --speculative-algorithm {name}{head} "
                f"--speculative-num-steps {k} --speculative-eagle-topk 1 --speculative-num-draft-tokens {k + 1}")
    if engine == "llama.cpp":
        gguf, knobs = shlex.quote(Path(target.rstrip("/")).name + ".gguf"), s.knobs
        md = f" -md {shlex.quote(Path(folder.rstrip('/')).name + '.gguf')}" if folder else ""
        n_max, block = knobs.get("n_max", k), _block_size(folder)
        # a block drafter yields at most block - 1 tokens there: common_speculative_impl_draft_dflash clamps n-max
        clamp = (f"   # llama.cpp clamps this n-max to the drafter's block - 1 = {block - 1}"
                 if block and n_max > block - 1 else "")
        return (f"llama-server -m {gguf}{md} --spec-type {name} --spec-draft-n-max {n_max} "
                f"--spec-draft-n-min {knobs.get('n_min', 0)} --spec-draft-p-min {knobs.get('p_min', 0.0):g}{clamp}")
    if own_head:
        return (f"model.generate(**inputs, {name}=True)   # transformers drafts {head_layers(target)} token(s) per "
                f"step, its head's layer count; K={k} is gammatune's own")
    if folder:   # a head in its own folder: `generate` takes it as a model and drafts its own fixed count
        return (f"model.generate(**inputs, {name}=AutoModelForCausalLM.from_pretrained({folder!r}))   # transformers "
                f"drafts the head's generation_config num_assistant_tokens per step; K={k} is gammatune's own")
    return f"model.generate(**inputs, {name}={k})"


__all__ = ["LAYER_KEYS", "head_layers", "named_draft", "source_command", "source_of"]
