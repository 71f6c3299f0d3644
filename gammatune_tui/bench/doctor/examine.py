"""`gammatune doctor`: is this draft worth it on this machine, and with which policy and γ0?

The question people bring to speculative decoding is not "show me Table 2"
but "is this draft worth it on my hardware, and which setting should I
ship?". Under greedy decoding everything but the clock is exact: one trace
pass per prompt says what every policy would accept, and a short timing pass
of the decoder itself says what a drafted token and each verify window cost
here. So for every candidate draft this module records the traces, calibrates
the cost model, plays every method at every γ0 and the oracle over the
traces, and turns that into a verdict against plain target decoding (timed
while the traces were recorded). It reuses the simulator's pieces exactly as
`bench --simulate` does; `run.py` drives it with a progress bar,
`report.py` prints and saves it, `candidates.py` builds the
demo's deliberately poor drafts.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Sequence

from ...engine.common.pair import ModelPair
from ...engine.loading.models import load_pair
from ...engine.common.sampling import SamplingConfig
from ...engine.common.vocab import shared_vocab
from ...engine.policies import METHODS, PolicyParams, PolicySettings
# what `--gamma` is when not given: "at the defaults" means this γ0 and the shipped parameters
from ...engine.policies.policy_params import DEFAULT_GAMMA0
from ...engine.events.text_pieces import prompt_pieces
from ...errors import DraftUnusable, ModelLoadError, TokenizerMismatch
from ..live import protocol
from ..args import DOCTOR_GAMMAS as DEFAULT_GAMMAS
from ..sim import simulate as sim
from ..sim import trace_record
from ..sim.cost_model import CostModel
from . import grid as grid_mod
from .timing import TIMING_TOKENS, timing_pass
from .draftless import draft_size, load_args, record_greedy, run_stats, sampled_refusal, source_without_model
from .step_split import step_split
from ..sim.oracle import oracle_run, summarize
from ..sim.trace_sampled import record_sampled_trace

WORTH_IT = 1.05     # predicted speedup above which a draft is "worth it"; below 1.0 it loses to the target alone

Progress = Callable[[str, float], None]  # (what is being done, units of work just finished)


@dataclass(frozen=True)
class Candidate:
    """A draft to examine: what the table calls it, what `load_pair` gets, and how a command line names it.

    `args` are the model options that select this pair in `gammatune chat`
    (none for the embedded demo pair); None for a draft built for this check
    in a temporary folder, which is examined but never recommended.
    """

    label: str
    path: str
    args: tuple[str, ...] | None = ()

    @property
    def built(self) -> bool:
        return self.args is None


@dataclass
class MethodResult:
    """One method over the prompt set: speedup over target-only at each γ0, its best γ0, and at the defaults.

    The spreads are the largest change of that speedup when one timing pass
    prices it instead of the pool (0 when there was one pass).
    """

    method: str
    per_gamma: dict[int, float]
    best_gamma: int
    best: float
    at_default: float
    best_spread: float = 0.0
    at_default_spread: float = 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["per_gamma"] = {str(g): v for g, v in self.per_gamma.items()}
        return d


@dataclass
class DraftReport:
    """Everything the doctor found out about one draft ("examined", "refused" or "interrupted")."""

    label: str
    path: str
    built: bool = False
    status: str = "examined"
    reason: str = ""
    params: int = 0
    precision: str = ""                  # the draft's precision ("float32", "int4 g32") and its weight bytes
    weight_bytes: int = 0                # (a self-draft: what it adds to the target's)
    prompts: int = 0
    tokens: int = 0
    agreement: float = math.nan          # α: share of positions where the draft's argmax is the target's token
    mean_run: float = math.nan           # accepted tokens per step when drafting until the first miss
    c: float = math.nan                  # T_verify(1) / T_draft per token
    draft_ms: float = math.nan           # per drafted token
    verify_ms: dict[int, float] = field(default_factory=dict)  # k tokens in one target pass
    step_ms: dict[str, float] = field(default_factory=dict)    # a head's drafting step by part (step_split.py)
    plain_tok_s: float = math.nan        # target-only decoding, timed beside the decoder in the timing pass
    methods: list[MethodResult] = field(default_factory=list)
    best_method: str = ""
    best_gamma: int = 0
    predicted: float = math.nan          # best method at its best γ0, over target-only
    predicted_spread: float = 0.0        # its largest change when one timing pass prices it instead of the pool
    passes: int = 0                      # timing passes
    predicted_passes: list[float] = field(default_factory=list)  # the prediction as each pass alone prices it
    per_prompt: dict[str, float] = field(default_factory=dict)  # the same, prompt by prompt
    prompt_seconds: dict[str, list[float]] = field(default_factory=dict)  # prompt → [target-only s, predicted s]
    oracle: float = math.nan             # the hindsight-optimal γ over target-only: the bound for this draft
    oracle_spread: float = 0.0
    references: list[list[Any]] = field(default_factory=list)  # [name, γ (0: none), × target alone, spread]
    oracle_tokens_per_step: float = math.nan
    fragile: int = 0                     # near-tie positions where a live run may diverge from the trace
    seconds: float = 0.0
    cost_model: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)

    @property
    def examined(self) -> bool:
        return self.status == "examined"

    @property
    def spread(self) -> tuple[float, float]:
        vals = list(self.per_prompt.values())
        return (min(vals), max(vals)) if vals else (math.nan, math.nan)

    @property
    def verdict(self) -> str:
        """Said only as far as the spread across timing passes allows: a verdict holds over the whole spread."""
        if self.status == "refused":
            return f"refused: {self.reason}"
        if not self.examined:
            return "not examined (interrupted)"
        lo, hi = self.predicted - self.predicted_spread, self.predicted + self.predicted_spread
        if lo >= WORTH_IT:
            return "worth it"
        if hi < 1.0:
            if self.oracle + self.oracle_spread < 1.0:
                return "not worth it: even the oracle is slower than the target alone"
            return "not worth it: slower than the target alone"
        if self.predicted_spread > 0 and (hi >= WORTH_IT or lo < 1.0):
            return "marginal: within the timing spread of the target alone"
        return "marginal: about as fast as the target alone"

    @property
    def short_verdict(self) -> str:
        return self.verdict.split(":")[0].split(" (")[0]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["methods"] = [m.to_json() for m in self.methods]
        d["verify_ms"] = {str(k): v for k, v in self.verify_ms.items()}
        d["verdict"] = self.verdict
        d["spread"] = list(self.spread)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


@dataclass(frozen=True)
class DoctorConfig:
    """What every candidate is examined with."""

    target: str
    prompts: Sequence[Any]               # prompts.Prompt
    max_new_tokens: int = 96
    gammas: tuple[int, ...] = DEFAULT_GAMMAS
    raw: bool = False
    load_kwargs: dict[str, Any] = field(default_factory=dict)  # device, dtype, threads, trust_remote_code, …
    sampling: SamplingConfig = field(default_factory=SamplingConfig)  # greedy unless -t/--top-k/--top-p

    @property
    def law(self) -> str:
        """How tokens are served, for titles and advice: "greedy" or "sampled, T = 0.7, top-p 0.9"."""
        s = self.sampling
        if s.greedy:
            return "greedy"
        return ", ".join(["sampled", f"T = {s.temperature:g}"] + ([f"top-k {s.top_k}"] if s.top_k else [])
                         + ([f"top-p {s.top_p:g}"] if s.top_p < 1 else []))

    @property
    def max_window(self) -> int:
        return max(max(self.gammas), PolicyParams().gamma_max)

    def units(self) -> int:
        """Progress units per candidate: loading, one per prompt's trace, the timing pass, the simulation."""
        return len(self.prompts) + 3


def load(cfg: DoctorConfig, cand: Candidate) -> Any:
    """The pair target + this draft; the tokenizer gate and loading errors raise GammatuneErrors."""
    return load_pair(cfg.target, **load_args(cand.path), **cfg.load_kwargs)


@dataclass
class Measured:
    """What one draft's passes measured: its traces, its cost model, target-only seconds per token, prefills,
    and each timing pass's own (cost model, target-only seconds per token)."""

    traces: list[sim.Trace]
    cost: CostModel
    plain_token_s: float
    prefill_s: list[float]
    passes: list[tuple[CostModel, float]] = field(default_factory=list)


def record(pair: ModelPair, cfg: DoctorConfig, progress: Progress,
           plain: dict[tuple, tuple[list[int], float, float]] | None = None) -> Measured:
    """The traces (one greedy pass per prompt) and the cost model (the decoder timed at several windows).

    `plain` keeps each prompt's target-only run across drafts: it depends on
    the target alone, so it is decoded (and timed) once, and every draft is
    measured against the same baseline.
    """
    plain = {} if plain is None else plain
    pid = [protocol.PromptIds(p.id, pair.encode_prompt(p.text, raw=cfg.raw)) for p in cfg.prompts]
    protocol.warm_up(pair, pid[0], protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                        baselines=(protocol.PLAIN,)))
    vocab = shared_vocab(pair.target, pair.draft)
    traces = []
    for p in pid:
        t0 = time.perf_counter()
        prompt_pieces(pair.tokenizer, p.ids)
        header_s = time.perf_counter() - t0
        key = (tuple(p.ids), vocab, cfg.max_new_tokens)
        if key not in plain:
            plain[key] = trace_record.target_run(pair, p.ids, cfg.max_new_tokens, pair.eos_ids)
        if cfg.sampling.greedy:   # a draft model's trace, or the trace kind of a source without one
            traces.append(record_greedy(pair, p.id, p.ids, cfg.max_new_tokens, cfg.max_window, header_s,
                                        plain[key]))
        else:  # coupled draws (trace_sampled.py); target-only is priced from the timing passes below
            traces.append(record_sampled_trace(pair, p.id, p.ids, cfg.max_new_tokens, cfg.max_window - 1,
                                               pair.eos_ids, cfg.sampling, header_s))
        progress(f"trace {p.id}", 1)
    progress("timing the decoder", 0)
    cost, per_token, passes = timing_pass(pair, pid[0], min(cfg.max_new_tokens, TIMING_TOKENS), cfg.max_window,
                                          sampling=None if cfg.sampling.greedy else cfg.sampling)
    for c in (cost, *(c for c, _ in passes)):
        c.session_s = max(0.0, c.outside_s - traces[0].session_s)  # what a session spends outside its steps
    prefills = [plain[(tuple(p.ids), vocab, cfg.max_new_tokens)][1] for p in pid]
    progress("timing the decoder", 1)
    return with_target_costs(Measured(traces, cost, per_token, prefills, list(passes)), cost.verify_s, per_token)


def with_target_costs(m: Measured, verify_s: dict[int, float], plain_token_s: float) -> Measured:
    """`m` priced with these target costs: verify passes, and target-only decoding (prefill + tokens × per token)."""
    for t, pre in zip(m.traces, m.prefill_s):
        t.plain_s = pre + len(t.tokens) * plain_token_s
    cost = replace(m.cost, verify_s={**verify_s, 1: plain_token_s})
    return Measured(m.traces, cost, plain_token_s, m.prefill_s, m.passes)


def pooled(measured: Sequence[Measured]) -> list[Measured]:
    """Every draft priced with the fastest target costs any timing pass saw.

    The verify curve and target-only decoding are the target's, the same
    whichever draft is examined; each draft's timing pass ran at a different
    moment of a machine whose other jobs come and go, so taking each target
    cost at its fastest over all passes keeps one busy spell from ranking one
    draft below another. The draft's own cost per token stays its own.
    """
    if not measured:
        return []
    verify: dict[int, float] = {}
    for m in measured:
        for k, v in m.cost.verify_s.items():
            verify[k] = min(verify.get(k, math.inf), v)
    plain = min(m.plain_token_s for m in measured)
    return [with_target_costs(m, verify, plain) for m in measured]


def simulate(report: DraftReport, traces: Sequence[sim.Trace], cost: CostModel, cfg: DoctorConfig,
             passes: Sequence[tuple[CostModel, float]] = (), prefill_s: Sequence[float] = ()) -> DraftReport:
    """Every method at every γ0 and the oracle over the traces, as speedups over target-only decoding.

    `passes` (each timing pass's cost model and target-only seconds per token)
    and the prompts' `prefill_s` price everything again per pass: the spreads.
    """
    report.methods = []
    plain_s = sum(t.plain_s for t in traces)
    tokens = sum(len(t.tokens) for t in traces)
    gammas = sorted(set(cfg.gammas) | {DEFAULT_GAMMA0})
    grid, recs, oracle = grid_mod.speedup_grid(traces, cost, plain_s, gammas, cfg.max_new_tokens)
    per_pass: list[dict] = []
    spread, o_spread = grid_mod.pass_spreads(traces, grid, oracle, passes, prefill_s, gammas, cfg.max_new_tokens,
                                             per_pass)
    best: tuple[float, str, int] = (-math.inf, "", 0)
    for m in METHODS:
        per_gamma = {g: grid[(m, g)] for g in cfg.gammas}
        g_best = max(per_gamma, key=lambda g: per_gamma[g])
        if per_gamma[g_best] > best[0]:
            best = (per_gamma[g_best], m, g_best)
        report.methods.append(MethodResult(m, per_gamma, g_best, per_gamma[g_best], grid[(m, DEFAULT_GAMMA0)],
                                           spread[(m, g_best)], spread[(m, DEFAULT_GAMMA0)]))
    report.predicted, report.best_method, report.best_gamma = best
    report.predicted_spread = spread[(best[1], best[2])]
    report.predicted_passes = [p[(best[1], best[2])] for p in per_pass]
    report.passes = len(passes)
    best_recs = recs[(best[1], best[2])]
    report.per_prompt = {t.prompt_id: t.plain_s / r.wall_s for t, r in zip(traces, best_recs) if r.wall_s > 0}
    report.prompt_seconds = {t.prompt_id: [t.plain_s, r.wall_s] for t, r in zip(traces, best_recs)}
    report.oracle_spread = o_spread
    report.references = grid_mod.references(grid, spread)
    runs = [oracle_run(t, cost, cfg.max_new_tokens) for t in traces]
    summary = summarize(traces, runs)
    report.oracle, report.oracle_tokens_per_step = summary.speedup_over_plain, summary.tokens_per_step
    agree = total = 0
    steps: list[int] = []
    for t in traces:
        a, n, r = run_stats(t)
        agree, total, steps = agree + a, total + n, steps + r
    report.agreement = agree / total if total else math.nan
    report.mean_run = statistics.fmean(steps) if steps else math.nan
    report.tokens, report.prompts = tokens, len(traces)
    report.plain_tok_s = tokens / plain_s if plain_s > 0 else math.nan
    report.draft_ms = cost.draft_token_s * 1000
    report.verify_ms = {k: v * 1000 for k, v in sorted(cost.verify_s.items())}
    report.c = cost.verify(1) / cost.draft_token_s if cost.draft_token_s > 0 else math.nan
    report.fragile = sum(t.fragile + len(t.target_flips) for t in traces)
    report.cost_model = cost.to_json()
    return report


def examine(cand: Candidate, cfg: DoctorConfig, progress: Progress,
            plain: dict[tuple, tuple[list[int], float, float]] | None = None) -> tuple[DraftReport, Measured | None]:
    """One candidate from start to verdict, and what was measured (None when refused). A refused draft comes
    back with its reason; a target that cannot be loaded is everyone's problem, not this draft's: raised."""
    t0 = time.perf_counter()
    report = DraftReport(cand.label, cand.path, cand.built)
    progress(f"loading {cand.label}", 0)
    source = source_without_model(cand.path)
    if source is not None and not cfg.sampling.greedy:   # known before anything loads
        return _refused(report, sampled_refusal(source, cfg.target, cand.path), cfg, progress), None
    try:
        pair = load(cfg, cand)
    except (TokenizerMismatch, ModelLoadError, DraftUnusable) as exc:   # this draft's fault: skipped, said so
        if str(exc).startswith("target model"):
            raise
        return _refused(report, str(exc), cfg, progress), None
    device = str(pair.device)
    if pair.draft is None and not cfg.sampling.greedy:   # a head recognised from its folder's config at load
        reason = sampled_refusal(pair.drafter.name, cfg.target, cand.path)
        del pair
        free_memory(device)
        return _refused(report, reason, cfg, progress), None
    try:
        report.params, report.precision, report.weight_bytes = draft_size(pair)
        report.machine = protocol.environment(pair)
        progress(f"traces of {cand.label}", 1)
        measured = record(pair, cfg, progress, plain)
        simulate(report, measured.traces, measured.cost, cfg, measured.passes, measured.prefill_s)
        if measured.traces:   # a head: where its step goes, part by part
            first = measured.traces[0]
            report.step_ms = step_split(pair, list(first.prompt_ids) + list(first.tokens[:8]))
        progress("simulated", 1)
    finally:
        del pair
        free_memory(device)
    report.seconds = time.perf_counter() - t0
    return report, measured


def _refused(report: DraftReport, reason: str, cfg: DoctorConfig, progress: Progress) -> DraftReport:
    report.status, report.reason = "refused", reason   # skipped, with its reason (not an error)
    progress("refused", cfg.units())
    return report


def free_memory(device: str) -> None:
    """After a pair is dropped: collect it now (a target and two drafts need not fit at once)."""
    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def rank(reports: Sequence[DraftReport]) -> list[DraftReport]:
    """Examined drafts by predicted speedup (best first), then the interrupted, then the refused."""
    order = {"examined": 0, "interrupted": 1, "refused": 2}
    return sorted(reports, key=lambda r: (order.get(r.status, 3), -(r.predicted if r.examined else 0.0)))
