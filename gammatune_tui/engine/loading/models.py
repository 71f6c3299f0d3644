"""Loading a draft/target pair: presets, devices, dtypes, quantization, the tokenizer gate.

Speculative decoding only makes sense when a draft token id means the same
string to the target, so a pair is refused unless both tokenizers map every
token string to the same id. Everything that can go wrong because of what the
user typed (a missing directory, a directory that is not a model, a hub id
that is not in the local cache, pickle weights without --allow-pickle)
becomes a one-line ModelLoadError, found before any weights are read.

The network is used only when asked for (`download=True`, `--download`): a
hub id is otherwise read from the local Hugging Face cache, and one that is
not there fails at once with the `hf download` command that fetches it —
not after a minute of retries against a network that may not be there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

import torch

from ...errors import InvalidParameter, ModelLoadError, TokenizerMismatch
from ..common.auto_precision import auto_cpu_dtype
from ..common.devices import resolve_device, resolve_dtype
from .model_files import (ModelRef, download_command, from_pretrained, in_local_cache, load_weights, locate_pair,
                          matrix_bytes, read_config, with_gguf_converted)
from ..common.end_of_turn import collect_eos_ids
from ..common.pair import ModelPair
from ..common.packed_linear import pack_for_verify, pack_setting
from ..common.prompt_format import VICUNA_SYSTEM, vicuna_format
from ..drafting.draft_sources import DrafterSettings, check_source_files, prepare_source
from .load_stages import LOAD_STAGES, StageClock
from .pair_refs import PairRefs, check_pair, settle_pair
from .presets import PRESETS, Preset
from ..runners import check_engine, check_engine_device, runner_pool
from .warmup import warm_up

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

ProgressFn = Callable[[str, float], None]


# -- finding and loading models ---------------------------------------------------------

def _load_tokenizer(ref: ModelRef, what: str, trust_remote_code: bool, download: bool = False) -> Any:
    from transformers import AutoTokenizer

    return from_pretrained(AutoTokenizer.from_pretrained, ref, what, download=download,
                           trust_remote_code=trust_remote_code)


def check_tokenizers(target_tok: PreTrainedTokenizerBase, draft_tok: PreTrainedTokenizerBase) -> None:
    """Same vocabulary size and the same id for every token string, else TokenizerMismatch."""
    tv = target_tok.get_vocab()
    dv = draft_tok.get_vocab()
    if tv == dv:
        return
    t_inv = {i: s for s, i in tv.items()}
    d_inv = {i: s for s, i in dv.items()}
    for i in sorted(set(t_inv) | set(d_inv)):
        a, b = t_inv.get(i), d_inv.get(i)
        if a != b:
            raise TokenizerMismatch(
                f"draft and target tokenizers differ (vocabulary {len(tv)} vs {len(dv)}): "
                f"id {i} is {a!r} in the target but {b!r} in the draft"
            )
    raise TokenizerMismatch(f"draft and target tokenizers differ (vocabulary {len(tv)} vs {len(dv)})")


def _param_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def _quantize(model: PreTrainedModel, quantize: str) -> None:
    try:
        from optimum.quanto import freeze, qint4, qint8
        from optimum.quanto import quantize as quanto_quantize
    except ImportError:
        raise ModelLoadError("--quantize needs optimum-quanto (pip install optimum-quanto)") from None
    quanto_quantize(model, weights=qint8 if quantize == "int8" else qint4)
    freeze(model)


def load_pair(
    target: str | None = None,
    draft: str | None = None,
    *,
    pair: str | None = None,
    demo: bool = False,
    device: str | torch.device = "auto",
    dtype: str | torch.dtype = "auto",
    quantize: str | None = None,
    device_map: str | None = None,
    trust_remote_code: bool = False,
    allow_pickle: bool = False,
    threads: int | None = None,
    engine: str = "auto",
    warmup: bool = True,
    download: bool = False,
    progress: ProgressFn | None = None,
    drafter: DrafterSettings | str | None = None,
    draft_dtype: str | torch.dtype | None = None,
) -> ModelPair:
    """Load a draft/target pair (paths, hub ids, a preset, or the embedded demo pair).

    `drafter="prompt-lookup"` (or a DrafterSettings with that name) drafts by
    prompt lookup: only the target is loaded (of a preset or the demo pair too),
    and `draft` must not be given.

    `draft="self:int4"` (or `self:int4:gN`, `self:int8`, `self:bf16`) builds the
    draft from the target's own weights in memory (engine/drafting/self_draft.py): any
    target, a preset's or the demo's, no tokenizer gate. `draft_dtype` loads a
    draft model at a dtype of its own (default: the target's); exactness is the
    target's, as loaded, either way.

    `engine` picks how forward passes run (auto, eager, static, graphs; docs/runners.md);
    a runner that cannot run here raises EngineUnavailable. With `warmup` (the
    default) an untimed warm-up runs before returning, so the first session runs
    at steady speed; `pair.warmup_s` says how long it took. Hub models are read
    from the local Hugging Face cache only; `download` lets them be fetched (the
    network is used only when asked for).
    """
    clock = StageClock()
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:  # pragma: no cover
        pass
    clock.lap("imports")

    def report(stage: str, frac: float) -> None:
        if progress is not None:
            progress(stage, frac)

    if quantize not in (None, "int8", "int4"):
        raise InvalidParameter(f"--quantize must be int8 or int4, got {quantize!r}")
    if device_map not in (None, "auto"):
        raise InvalidParameter(f"--device-map must be 'auto', got {device_map!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise InvalidParameter(f"--threads must be a whole number >= 1, got {threads!r}")
    engine = check_engine(engine)
    pack_setting()   # a bad GAMMATUNE_PACKED_VERIFY is one line before anything loads
    target, draft, vicuna, preset_name, is_demo, drafter_settings, own = settle_pair(target, draft, pair, demo,
                                                                                     drafter)
    lookup = not drafter_settings.loads_draft
    if draft_dtype not in (None, "auto") and (own is not None or lookup):
        raise InvalidParameter("--draft-dtype is for a draft model loaded from files"
                               + (f"; {own.name} sets its own precision ({own.precision})" if own else ""))
    if preset_name is not None and quantize is None:
        quantize = PRESETS[preset_name].quantize

    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    d_dt = dt if draft_dtype in (None, "auto") else resolve_dtype(draft_dtype, dev)
    if device_map is None:
        check_engine_device(engine, dev)  # known before loading anything
    t_ref, d_ref = locate_pair(target, draft, allow_pickle=allow_pickle, download=download)
    check_source_files(drafter_settings, read_config(t_ref))   # a head that does not fit: one line, now
    if t_ref.gguf or (d_ref is not None and d_ref.gguf):
        clock.lap("")
        t_ref = with_gguf_converted(t_ref, "target", lambda m: report(m, 0.0))
        d_ref = with_gguf_converted(d_ref, "draft", lambda m: report(m, 0.0)) if d_ref is not None else None
        clock.lap("conversion")

    report("tokenizer", 0.0)
    t_tok = _load_tokenizer(t_ref, "target", trust_remote_code, download)
    if d_ref is not None:
        d_tok = _load_tokenizer(d_ref, "draft", trust_remote_code, download)
        check_tokenizers(t_tok, d_tok)
    clock.lap("tokenizer")

    dtype_why = ""
    if dtype in (None, "auto") and dev.type == "cpu" and not quantize and device_map is None and \
            not (own is not None and own.kind == "bf16"):   # a bfloat16 self-draft asks for a float32 target
        dt, dtype_why = auto_cpu_dtype(matrix_bytes(t_ref))   # bfloat16 where this CPU has it natively and it pays
        d_dt = dt if draft_dtype in (None, "auto") else d_dt
    common: dict[str, Any] = {"dtype": dt, "trust_remote_code": trust_remote_code}
    if not allow_pickle:
        common["use_safetensors"] = True
    report("target", 0.1)
    t_kw = dict(common)
    if device_map == "auto":
        t_kw["device_map"] = "auto"
    target_model = load_weights(AutoModelForCausalLM.from_pretrained, t_ref, "target", download=download, **t_kw)
    if device_map != "auto":
        target_model.to(dev)
    else:
        dev = next(target_model.parameters()).device
    if quantize:
        report("quantize", 0.6)
        _quantize(target_model, quantize)
    draft_model, own_draft = None, None
    if d_ref is not None:
        report("draft", 0.7)
        draft_model = load_weights(AutoModelForCausalLM.from_pretrained, d_ref, "draft", download=download,
                                      **{**common, "dtype": d_dt})
        draft_model.to(dev)
        draft_model.eval()
    target_model.eval()
    clock.lap("weights")
    if own is not None:
        report(f"draft {own.name}", 0.7)
        from ..drafting.self_draft import build_self_draft

        draft_model, own_draft = build_self_draft(target_model, own)
        clock.lap("self-draft")
    pack_for_verify(target_model, dev, next(target_model.parameters()).dtype)   # float32 on a CPU: a verify at about a step's price, where it pays

    if dev.type == "cpu":
        n = threads
        if n is None:
            # 2 threads on a 2-core machine collapse when anything else holds a core (a 135M model:
            # warm-up 50 s instead of 6 s at load 3, docs/runners.md), so small machines get one
            cores = os.cpu_count() or 1
            n = 1 if _param_count(target_model) < 100_000_000 or cores <= 2 else cores
        torch.set_num_threads(n)
    if is_demo:
        name_target = "demo/target"
    elif preset_name is not None:
        name_target = PRESETS[preset_name].target   # a hub id, or the packaged file's name (not its path)
    else:
        name_target = target
    name_draft = drafter_settings.name if lookup else (own.name if own is not None else
                                                       "demo/draft" if is_demo else str(draft))
    name_draft = prepare_source(drafter_settings, target_model) or name_draft   # a head read now, named
    made = ModelPair(
        target=target_model, draft=draft_model, tokenizer=t_tok, device=dev, dtype=dt,
        name_target=name_target,
        name_draft=name_draft, dtype_why=dtype_why,
        is_demo=is_demo, vicuna=vicuna, preset=preset_name, quantize=quantize, engine=engine,
        drafter=drafter_settings, self_draft=own_draft,
    )
    report("self-checks", 0.85)
    clock.lap("")   # building the pair (its eos ids) belongs to no stage worth naming
    runner = runner_pool(made).label  # resolves the engine (the runners' self-checks): EngineUnavailable here, before warm-up
    clock.lap("self-checks")
    if warmup:
        report(f"warm-up ({runner})", 0.9)
        warm_up(made, progress=report)  # reports "compile" / "capture" as their own stages; timings in runner_pool.timings
        clock.lap("warm-up")
    made.load_s = clock.stages
    report("ready", 1.0)
    return made


__all__ = [
    "ModelPair", "Preset", "PRESETS", "LOAD_STAGES", "load_pair", "check_tokenizers",
    "vicuna_format", "collect_eos_ids", "in_local_cache", "VICUNA_SYSTEM", "check_pair", "PairRefs",
    "download_command",
]
