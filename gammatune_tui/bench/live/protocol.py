"""The paper's protocol, live: every method × γ0 on every prompt, plus the baselines.

Greedy decoding with a fixed seed; one warm-up of each code path first (not
counted); runs interleaved per prompt so a slow spell of the machine hits all
methods alike. Baselines are measured in the same process on the same
prompts: plain target-only decoding (a KV-cached greedy loop, one token per
pass) and transformers' assisted generation with the "heuristic" schedule and
with the "constant" schedule and its confidence threshold — or, when the pair
drafts by prompt lookup (no draft model), transformers' prompt lookup decoding
(`prompt_lookup_num_tokens` = γ0, `max_matching_ngram_size` = our ngram_max).
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

from ...engine.common.kernel_path import kernel_path
from ...engine.events import StepEvent
from ...engine.common.pair import ModelPair
from ...engine.common.names import SOURCE_PARAMS
from ...engine.drafting.draft_sources import pair_drafter
from ...engine.plain import plain_decode
from ...engine.policies import PolicySettings
from ...engine.common.sampling import SamplingConfig
from ...session.lossless import first_difference, judge
from ...session.stats import RunningStats
from ..results import HF_CONSTANT, HF_HEURISTIC, HF_LOOKUP, PLAIN, RunRecord
from ...engine.runners import runner_pool

if TYPE_CHECKING:   # annotations only: transformers loads with the models
    from torch.utils.hooks import RemovableHandle
    from transformers import GenerationMixin, PreTrainedModel

ALL_BASELINES = (PLAIN, HF_HEURISTIC, HF_CONSTANT)
LOOKUP_BASELINES = (PLAIN, HF_LOOKUP)  # a prompt-lookup sweep: transformers' prompt lookup is the peer

ProgressFn = Callable[[str, int], None]  # (description, tokens of work just done)


@dataclass
class PromptIds:
    id: str
    ids: list[int]


@dataclass
class SweepConfig:
    methods: list[str]
    gammas: list[int]
    max_new_tokens: int
    repeats: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    baselines: tuple[str, ...] = ALL_BASELINES
    seed: int = 0
    # how tokens are served: greedy (the paper's protocol) unless --simulate was asked for a temperature
    sampling: SamplingConfig = field(default_factory=SamplingConfig)

    def run_count(self, n_prompts: int) -> int:
        per = len(self.methods) * len(self.gammas)
        per += (PLAIN in self.baselines) + len(self.gammas) * sum(b in self.baselines for b in (HF_HEURISTIC, HF_CONSTANT, HF_LOOKUP))
        return per * n_prompts * self.repeats


def stateful_model(pair: ModelPair) -> str | None:
    """The class of a model in the pair whose recurrent state transformers' assisted generation refuses
    ("not supported with stateful models"), or None."""
    from ...engine.runners.recurrent import has_recurrent_state

    for model in (pair.target, pair.draft):
        if model is not None and has_recurrent_state(model):
            return type(model).__name__
    return None


def for_pair(cfg: SweepConfig, pair: ModelPair) -> SweepConfig:
    """`cfg` without transformers' assisted baselines where transformers refuses the pair (a hybrid model)."""
    if stateful_model(pair) is None:
        return cfg
    kept = tuple(b for b in cfg.baselines if b not in (HF_HEURISTIC, HF_CONSTANT, HF_LOOKUP))
    return cfg if kept == cfg.baselines else replace(cfg, baselines=kept)


def environment(pair: ModelPair) -> dict[str, Any]:
    """Versions, device, dtype, threads and machine: what a reader needs to weigh the numbers."""
    import torch
    import transformers

    from ...engine.events.step_events import versions

    env: dict[str, Any] = {
        "versions": {**versions(), "python": platform.python_version()},
        "device": str(pair.device),
        "dtype": str(pair.dtype).replace("torch.", ""),
        "kernel": kernel_path(pair.dtype, pair.device, pair.target),   # the matmul path a verify runs (its c(k) is the path's)
        "dtype_why": pair.dtype_why,   # why auto chose that precision, where it chose other than float32 on a CPU
        "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "processor": platform.processor(),
        "target": str(pair.name_target),
        "draft": str(pair.name_draft),
        "demo_pair": bool(pair.is_demo),
        "target_params": sum(p.numel() for p in pair.target.parameters()),
        "draft_params": sum(p.numel() for p in pair.draft.parameters()) if pair.draft is not None else 0,
        "transformers": transformers.__version__,
        "engine": str(pair.engine or ""),
        "warmup_s": float(pair.warmup_s or 0.0),
        # each model's precision and weight bytes (a self-draft's: what it adds), as headers record them
        "models": pair.models(),
        "runner": runner_pool(pair).label,   # what the sweep's sessions ran on (eager, static, graphs)
    }
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    env["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if torch.cuda.is_available() and str(env["device"]).startswith("cuda"):
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


# -- single runs -------------------------------------------------------------------------------------


def run_policy(pair: ModelPair, settings: PolicySettings, prompt: PromptIds, max_new_tokens: int, repeat: int = 0,
               seed: int = 0, keep_events: list | None = None, sampling: SamplingConfig | None = None) -> RunRecord:
    """One live session of our decoder; the record's wall time is the summary's (header to last step).

    Greedy unless `sampling` is given (then its temperature/top-k/top-p, with `seed`).
    """
    from dataclasses import replace

    from ...engine.decoder import SpeculativeDecoder

    served = SamplingConfig(temperature=0.0, seed=seed) if sampling is None else replace(sampling, seed=seed)
    dec = SpeculativeDecoder(pair, settings, served)
    rec = RunRecord(method=settings.method, gamma0=settings.gamma0, prompt_id=prompt.id, repeat=repeat)
    out: list[int] = []
    stats = RunningStats()
    for ev in dec.generate(list(prompt.ids), max_new_tokens=max_new_tokens):
        if keep_events is not None:
            keep_events.append(ev)
        stats.add(ev)
        if isinstance(ev, StepEvent):
            out.extend(e.id for e in ev.emitted)
    rec.add(stats.tally)
    if stats.summary is not None:
        rec.tokens, rec.wall_s, rec.stop_reason = stats.summary.tokens, stats.summary.wall_s, stats.summary.stop_reason
    rec.output_ids = out
    return rec


class _ForwardCount:
    """Counts a model's forward passes during a transformers `generate()`: its steps (one target pass each)."""

    def __init__(self, model: PreTrainedModel | None):
        self.model, self.calls = model, 0
        self._hook: RemovableHandle | None = None

    def _count(self, *_: object) -> None:
        self.calls += 1

    def __enter__(self) -> "_ForwardCount":
        if self.model is not None:
            self._hook = self.model.register_forward_hook(self._count)
        return self

    def __exit__(self, *_: object) -> None:
        if self._hook is not None:
            self._hook.remove()


def run_plain(pair: ModelPair, prompt: PromptIds, max_new_tokens: int, repeat: int = 0,
              margins: list[tuple[float, float]] | None = None) -> RunRecord:
    """Plain target-only greedy decoding on the paper's path (transformers' cache, one token per pass).

    `margins`, when given, receives each token's (top logit, top-two gap): what judges a method's difference."""
    run = plain_decode(pair, prompt.ids, max_new_tokens, transformers_cache=True)
    if margins is not None:
        margins.extend(run.margins)
    return RunRecord(method=PLAIN, gamma0=None, prompt_id=prompt.id, repeat=repeat, tokens=run.tokens,
                     steps=run.tokens, target_calls=run.tokens, wall_s=run.wall_s, stop_reason=run.stop_reason,
                     output_ids=run.token_ids)


def run_hf_assisted(pair: ModelPair, schedule: str, gamma0: int, threshold: float, prompt: PromptIds,
                    max_new_tokens: int, repeat: int = 0) -> RunRecord:
    """transformers' assisted generation, configured where it reads its knobs: the DRAFT's generation_config.

    "heuristic" writes its learned count back to that config after each call,
    so the config is set before and restored after every run. A threshold of
    0 turns the confidence stop off (the plain heuristic schedule).
    """
    import torch

    assert pair.draft is not None, "transformers' assisted generation needs a draft model"
    gc = pair.draft.generation_config
    saved = (gc.num_assistant_tokens, gc.num_assistant_tokens_schedule, gc.assistant_confidence_threshold)
    gc.num_assistant_tokens = gamma0
    gc.num_assistant_tokens_schedule = schedule
    gc.assistant_confidence_threshold = threshold
    device = pair.device
    eos = sorted(pair.eos_ids)
    inp = torch.tensor([list(prompt.ids)], device=device)
    pad = eos[0] if eos else 0
    try:
        t0 = time.perf_counter()
        with torch.no_grad(), _ForwardCount(pair.target) as t_calls, _ForwardCount(pair.draft) as d_calls:
            out = cast("GenerationMixin", pair.target).generate(   # a causal LM: a PreTrainedModel that generates
                inp, attention_mask=torch.ones_like(inp), assistant_model=pair.draft, do_sample=False,
                max_new_tokens=max_new_tokens, min_new_tokens=0, eos_token_id=eos or None, pad_token_id=pad,
                temperature=None, top_p=None, top_k=None, repetition_penalty=None,
            )
        wall = time.perf_counter() - t0
    finally:
        gc.num_assistant_tokens, gc.num_assistant_tokens_schedule, gc.assistant_confidence_threshold = saved
    new = out[0, inp.shape[1]:].tolist()
    for i, t in enumerate(new):
        if t in pair.eos_ids:
            new = new[:i + 1]
            break
    name = HF_HEURISTIC if schedule == "heuristic" else HF_CONSTANT
    return RunRecord(method=name, gamma0=gamma0, prompt_id=prompt.id, repeat=repeat, tokens=len(new), wall_s=wall,
                     steps=t_calls.calls, target_calls=t_calls.calls, draft_calls=d_calls.calls,
                     stop_reason="eos" if new and new[-1] in pair.eos_ids else "max_new_tokens", output_ids=new)


def run_hf_lookup(pair: ModelPair, gamma0: int, ngram_max: int, prompt: PromptIds, max_new_tokens: int,
                  repeat: int = 0) -> RunRecord:
    """transformers' prompt lookup decoding: `prompt_lookup_num_tokens` = γ0, n-grams from `ngram_max` down to 1."""
    import torch

    device = pair.device
    eos = sorted(pair.eos_ids)
    inp = torch.tensor([list(prompt.ids)], device=device)
    t0 = time.perf_counter()
    with torch.no_grad(), _ForwardCount(pair.target) as t_calls:
        out = cast("GenerationMixin", pair.target).generate(   # a causal LM: a PreTrainedModel that generates
            inp, attention_mask=torch.ones_like(inp), prompt_lookup_num_tokens=gamma0, max_matching_ngram_size=ngram_max,
            do_sample=False, max_new_tokens=max_new_tokens, min_new_tokens=0, eos_token_id=eos or None,
            pad_token_id=eos[0] if eos else 0, temperature=None, top_p=None, top_k=None, repetition_penalty=None,
        )
    wall = time.perf_counter() - t0
    new = out[0, inp.shape[1]:].tolist()
    for i, t in enumerate(new):
        if t in pair.eos_ids:
            new = new[:i + 1]
            break
    return RunRecord(method=HF_LOOKUP, gamma0=gamma0, prompt_id=prompt.id, repeat=repeat, tokens=len(new), wall_s=wall,
                     steps=t_calls.calls, target_calls=t_calls.calls,
                     stop_reason="eos" if new and new[-1] in pair.eos_ids else "max_new_tokens", output_ids=new)


def _ngram_max(pair: ModelPair) -> int:
    return pair_drafter(pair).params().get("ngram_max", SOURCE_PARAMS["ngram_max"].default)


# -- the sweep ---------------------------------------------------------------------------------------------


def warm_up(pair: ModelPair, prompt: PromptIds, cfg: SweepConfig) -> None:
    """Touch every code path once (allocator, kernels, lazy imports); nothing is recorded."""
    cfg = for_pair(cfg, pair)
    n = min(16, cfg.max_new_tokens)
    run_policy(pair, PolicySettings.build(cfg.methods[0] if cfg.methods else "specdecode", 4, **cfg.params), prompt, n)
    if PLAIN in cfg.baselines:
        run_plain(pair, prompt, n)
    if HF_HEURISTIC in cfg.baselines or HF_CONSTANT in cfg.baselines:
        run_hf_assisted(pair, "constant", 4, 0.0, prompt, n)
    if HF_LOOKUP in cfg.baselines:
        run_hf_lookup(pair, 4, _ngram_max(pair), prompt, n)


def hf_threshold(cfg: SweepConfig) -> float:
    """The τ our assistant-threshold runs use, so the constant-schedule baseline is matched."""
    return float(PolicySettings.build("assistant-threshold", 1, **cfg.params).params.tau)


def live_sweep(pair: ModelPair, prompts: Sequence[PromptIds], cfg: SweepConfig,
               progress: ProgressFn | None = None) -> tuple[list[RunRecord], dict[str, Any]]:
    """Runs the whole protocol; returns the records and a few checks (greedy outputs equal target-only).

    Ctrl+C ends the sweep between two runs' worth of work: the records finished so far are returned, and
    `checks["interrupted"]` is True (the run in progress is dropped), so the caller can still report them.
    """
    cfg = for_pair(cfg, pair)
    records: list[RunRecord] = []
    checks = {"runs": 0, "outputs_differing_from_target_only": [], "near_ties": [], "hf_outputs_differing": [],
              "interrupted": False}
    try:
        _sweep(pair, prompts, cfg, progress, records, checks)
    except KeyboardInterrupt:
        checks["interrupted"] = True
    checks["runs"] = len(records)
    return records, checks


def _judge(checks: dict[str, Any], pair: ModelPair, reference: list[int], margins: list[tuple[float, float]],
           ids: list[int], where: list[Any]) -> None:
    """A method's greedy text parted from target-only's: a near-tie at the precision (said, not a fault) or a fault."""
    pos = first_difference(reference, ids, False)
    v = judge(pos if pos is not None else 0, str(where[0]), "target-only", str(pair.dtype), margins)
    if v.near_tie:
        checks["near_ties"].append([*where, v.position, v.dtype, round(v.gap or 0.0, 4), round(v.tolerance or 0.0, 4)])
    else:
        checks["outputs_differing_from_target_only"].append(where)


def _sweep(pair: ModelPair, prompts: Sequence[PromptIds], cfg: SweepConfig, progress: ProgressFn | None,
           records: list[RunRecord], checks: dict[str, Any]) -> None:
    if prompts:
        warm_up(pair, prompts[0], cfg)
    tau = hf_threshold(cfg)
    for p in prompts:
        for rep in range(cfg.repeats):
            reference: list[int] | None = None
            margins: list[tuple[float, float]] = []
            if PLAIN in cfg.baselines:
                r = run_plain(pair, p, cfg.max_new_tokens, rep, margins)
                reference = r.output_ids
                records.append(_strip(r))
                if progress:
                    progress(f"{p.id} target-only", 1)
            for m in cfg.methods:
                for g in cfg.gammas:
                    r = run_policy(pair, PolicySettings.build(m, g, **cfg.params), p, cfg.max_new_tokens, rep, cfg.seed)
                    if reference is not None and r.output_ids is not None and r.output_ids != reference:
                        _judge(checks, pair, reference, margins, r.output_ids, [m, g, p.id, rep])
                    records.append(_strip(r))
                    if progress:
                        progress(f"{p.id} {m} γ0={g}", 1)
            for name, schedule, thr in ((HF_HEURISTIC, "heuristic", 0.0), (HF_CONSTANT, "constant", tau)):
                if name not in cfg.baselines:
                    continue
                for g in cfg.gammas:
                    r = run_hf_assisted(pair, schedule, g, thr, p, cfg.max_new_tokens, rep)
                    if reference is not None and r.output_ids is not None and r.output_ids != reference:
                        checks["hf_outputs_differing"].append([name, g, p.id, rep])
                    records.append(_strip(r))
                    if progress:
                        progress(f"{p.id} {name} γ0={g}", 1)
            if HF_LOOKUP in cfg.baselines:
                for g in cfg.gammas:
                    r = run_hf_lookup(pair, g, _ngram_max(pair), p, cfg.max_new_tokens, rep)
                    if reference is not None and r.output_ids is not None and r.output_ids != reference:
                        checks["hf_outputs_differing"].append([HF_LOOKUP, g, p.id, rep])
                    records.append(_strip(r))
                    if progress:
                        progress(f"{p.id} {HF_LOOKUP} γ0={g}", 1)


def _strip(r: RunRecord) -> RunRecord:
    r.output_ids = None
    return r
