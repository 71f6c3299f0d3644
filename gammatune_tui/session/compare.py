"""Compare's results: each method's runs, the ranked summary and the lossless check.

One run of each method ranks noise: on a shared CPU the same method moves
by several percent from run to run. So a comparison measures each method
several times (`--repeats`), reports the median and the spread (slowest to
fastest run), and ranks one method above another only when its slowest run
beats the other's fastest; overlapping methods share a rank. Plain
target-only decoding is measured beside them as a reference row, so the
table also says whether speculation pays at all.

Every number of a method's row but the median and spread is read off
`RunningStats` over its shown stream (the median run) — the same numbers its
pane in the compare screen shows. For greedy decoding every method must
produce the target's own text (docs/spec.md §1.3); the lossless check compares each
with target-only's tokens (or, in a recording, with the first method's), and says a
low-precision near-tie as one (session/lossless.py).
Measuring is `compare_job.py`'s; a recording gives the same runs
(`runs_from_recording`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ..engine.policies import METHODS
from ..engine.common.names import is_self_draft
from ..engine.events.precision_text import model_note
from .lossless import Lossless, first_difference, judge, worst
from .recording import RecordedSession, Recording
from .stats import RunningStats

MIN_METHODS = 2
DEFAULT_REPEATS = 3
"""Runs per method in CompareJob: the fewest that give a spread and a median that one slow run cannot move."""
MAX_METHODS = len(METHODS)  # every method at once
BASELINE = "specdecode"


@dataclass
class MethodRun:
    """One method's measured stream (the one the panes race) and the stats every view shows for it.

    `repeats` holds the tokens/s of every measured run of the method (the
    shown stream's included); the shown stream is the median run. A single
    stream has no repeats: its own tokens/s is its only measurement.
    """

    label: str
    events: list[Event] = field(default_factory=list)
    stats: RunningStats = field(default_factory=RunningStats)
    repeats: list[float] = field(default_factory=list)

    def add(self, ev: Event) -> None:
        self.events.append(ev)
        self.stats.add(ev)

    @property
    def header(self) -> SessionHeader | None:
        return self.stats.header

    @property
    def summary(self) -> SessionSummary | None:
        return self.stats.summary

    @property
    def method(self) -> str:
        h = self.stats.header
        return h.method if h is not None else self.label

    @property
    def speeds(self) -> list[float]:
        """tokens/s of every measured run (one value for a single stream)."""
        return list(self.repeats) if self.repeats else [self.stats.tokens_per_s]

    @property
    def token_ids(self) -> list[int]:
        return [t.id for ev in self.events if isinstance(ev, StepEvent) for t in ev.emitted]

    @property
    def tokens(self) -> list[str]:
        return [t.text for ev in self.events if isinstance(ev, StepEvent) for t in ev.emitted]

    @property
    def text(self) -> str:
        return "".join(self.tokens)

    @property
    def greedy(self) -> bool:
        h = self.stats.header
        if h is None:
            return False
        t = h.sampling.get("temperature", 0.0)
        return isinstance(t, (int, float)) and not isinstance(t, bool) and t == 0

    @classmethod
    def from_events(cls, events: Iterable[Event], label: str = "") -> "MethodRun":
        run = cls(label)
        for ev in events:
            run.add(ev)
        if not run.label:
            run.label = run.header.label or run.header.method if run.header else "?"
        return run

    @classmethod
    def from_session(cls, session: RecordedSession) -> "MethodRun":
        return cls.from_events(session.events, session.header.label or session.header.method)

    @classmethod
    def from_repeats(cls, runs: Sequence["MethodRun"]) -> "MethodRun":
        """The median run of several measured runs of one method, carrying every run's tokens/s."""
        if not runs:
            raise ValueError("from_repeats needs at least one run")
        complete = [r for r in runs if r.summary is not None] or list(runs)
        speeds = [r.stats.tokens_per_s for r in complete]
        middle = statistics.median_low(speeds)
        shown = next(r for r in complete if r.stats.tokens_per_s == middle)
        out = cls(shown.label, list(shown.events), shown.stats, speeds if len(runs) > 1 else [])
        return out


@dataclass(frozen=True)
class Reference:
    """Plain target-only decoding on the same prompt and sampling: the row every speedup can be read against."""

    speeds: tuple[float, ...]          # tokens/s of each run
    tokens: int
    token_ids: tuple[int, ...] = ()    # the target's own text (what greedy methods must reproduce)
    stop_reason: str = "max_new_tokens"
    greedy: bool = True
    label: str = "target-only"
    margins: tuple[tuple[float, float], ...] = ()   # greedy: (top logit, top-two gap) at each token (PlainRun)


@dataclass(frozen=True)
class SummaryRow:
    rank: int | None          # None: not ranked (a single run per method has no spread to rank against)
    label: str
    method: str
    tokens: int
    tokens_per_s: float       # the median over the runs
    speedup: float | None     # over specdecode; None when specdecode is not among the methods
    acceptance_rate: float
    tokens_per_step: float
    target_calls: int
    draft_calls: int
    elapsed_s: float
    stop_reason: str
    low: float = 0.0          # slowest and fastest run (tokens/s): the spread
    high: float = 0.0
    runs: int = 1
    tied: bool = False        # another row shares this rank
    over_plain: float | None = None   # speedup over target-only decoding, when it was measured
    reference: bool = False   # the target-only row
    drafted: int | None = None   # tokens drafted in the median run; 0 = it never drafted (α means nothing)

    @property
    def spread(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class CompareSummary:
    rows: list[SummaryRow]
    lossless: Lossless
    baseline: str | None
    ranked: bool = True       # False: one run per method, no spread, so no ranking
    runs: int = 1             # measured runs per method (the fewest, when they differ)
    greedy: bool = False      # every method decoded greedily (the backfire line then does not blame sampling)
    models: list[str] = field(default_factory=list)   # each model raced and its precision and size, once each

    def row(self, label: str) -> SummaryRow:
        return next(r for r in self.rows if r.label == label)

    @property
    def methods(self) -> list[SummaryRow]:
        return [r for r in self.rows if not r.reference]

    @property
    def leaders(self) -> list[SummaryRow]:
        """The methods ranked first (several when tied); none when unranked."""
        return [r for r in self.methods if r.rank == 1] if self.ranked else []


def check_lossless(runs: Sequence[MethodRun], reference: Reference | None = None) -> Lossless:
    """Greedy: every method's tokens against target-only's (when measured), else against the first method's.

    A difference is judged by target-only's top-two logit gap where the texts
    part (session/lossless.py): a near-tie at bf16/fp16 is said as one, any
    other difference is NOT lossless."""
    if not runs or not all(r.greedy for r in runs):
        return Lossless(checked=False, identical=False)
    margins: Sequence[tuple[float, float]] = ()
    if reference is not None and reference.greedy and reference.token_ids:
        ref_label, ref_ids, others = reference.label, list(reference.token_ids), list(runs)
        ref_stopped, margins = False, reference.margins
    else:
        ref_label, ref_ids, others = runs[0].label, runs[0].token_ids, list(runs[1:])
        ref_stopped = bool(runs[0].summary and runs[0].summary.stop_reason == "stopped")
    verdicts = []
    for r in others:
        stopped = ref_stopped or bool(r.summary and r.summary.stop_reason == "stopped") or r.summary is None
        pos = first_difference(ref_ids, r.token_ids, stopped)
        if pos is not None:
            verdicts.append(judge(pos, r.label, ref_label, r.header.dtype if r.header else "", margins))
    shown = worst(verdicts)
    return shown if shown is not None else Lossless(True, True, reference=ref_label)


def backfire(summary: CompareSummary) -> str | None:
    """Why speculation did not pay in this race, in one line; None when a method is clearly faster than target-only.

    Clearly: its slowest run beats target-only's fastest (with one run each,
    its median beats target-only's). On the demo pair at the
    demo's temperature 0.7 every method can land within target-only's spread,
    and a newcomer should read why rather than a ranking that means nothing.
    """
    ref = next((r for r in summary.rows if r.reference), None)
    if ref is None or not summary.methods:
        return None
    if summary.ranked and any(r.low > ref.high for r in summary.methods):
        return None
    if not summary.ranked and any(r.tokens_per_s > ref.tokens_per_s for r in summary.methods):
        return None
    if summary.greedy:
        return ("speculation did not pay in this race: no method is clearly faster than target-only decoding. "
                "A draft saves little when the target is small or the machine is busy; "
                "`gammatune doctor` measures this draft on this machine")
    return ("speculation did not pay in this race: no method is clearly faster than target-only decoding. "
            "Sampling (temperature > 0) accepts fewer drafts than greedy decoding, and a draft saves little when "
            "the target is small or the machine is busy; try -t 0, or `gammatune doctor` for this draft on this machine")


def spread_ranks(speeds: dict[str, Sequence[float]]) -> dict[str, int]:
    """1 + the number of entries clearly faster: whose slowest run beats this one's fastest.

    Entries whose runs overlap are not told apart, so they share a rank (a
    difference smaller than the run-to-run spread is not a ranking).
    """
    lo = {k: min(v) for k, v in speeds.items()}
    hi = {k: max(v) for k, v in speeds.items()}
    return {k: 1 + sum(1 for j in speeds if j != k and lo[j] > hi[k]) for k in speeds}


def summarize(runs: Sequence[MethodRun], reference: Reference | None = None) -> CompareSummary:
    """Rows by rank, then median tokens/s; ranks only where the runs' spreads do not overlap (needs 2+ runs each)."""
    base = next((r for r in runs if r.method == BASELINE), None)
    median = {r.label: statistics.median_low(r.speeds) for r in runs}
    base_tps = median[base.label] if base is not None else 0.0
    speeds: dict[str, Sequence[float]] = {r.label: r.speeds for r in runs}
    ref_label = None
    if reference is not None and reference.speeds:
        ref_label = reference.label
        speeds[ref_label] = reference.speeds
        median[ref_label] = statistics.median_low(reference.speeds)
    n_runs = min(len(v) for v in speeds.values()) if speeds else 0
    ranked = n_runs >= 2
    ranks = spread_ranks(speeds) if ranked else {}
    shared = {k for k, v in ranks.items() if sum(1 for w in ranks.values() if w == v) > 1}
    plain = median.get(ref_label) if ref_label else None

    def ratio(x: float, over: float | None) -> float | None:
        return x / over if over else None

    rows = []
    for r in runs:
        s = r.stats
        m = median[r.label]
        rows.append(SummaryRow(
            rank=ranks.get(r.label), label=r.label, method=r.method, tokens=s.tokens, tokens_per_s=m,
            speedup=ratio(m, base_tps) if base is not None else None,
            acceptance_rate=s.acceptance_rate, tokens_per_step=s.tokens_per_step,
            target_calls=s.target_calls, draft_calls=s.draft_calls, elapsed_s=s.elapsed_s,
            stop_reason=r.summary.stop_reason if r.summary else "cut off", drafted=s.drafted,
            low=min(r.speeds), high=max(r.speeds), runs=len(r.speeds), tied=r.label in shared,
            over_plain=ratio(m, plain),
        ))
    if reference is not None and ref_label is not None:
        m = median[ref_label]
        rows.append(SummaryRow(
            rank=ranks.get(ref_label), label=ref_label, method=ref_label, tokens=reference.tokens, tokens_per_s=m,
            speedup=ratio(m, base_tps) if base is not None else None, acceptance_rate=float("nan"),
            tokens_per_step=1.0, target_calls=reference.tokens, draft_calls=0,
            elapsed_s=reference.tokens / m if m else 0.0, stop_reason=reference.stop_reason,
            low=min(reference.speeds), high=max(reference.speeds), runs=len(reference.speeds),
            tied=ref_label in shared, over_plain=1.0, reference=True,
        ))
    # in rank order, fastest median first within a rank: "clearly faster" is not transitive (A can beat B while
    # a noisy C overlaps both), so median order alone could print a "2" above a "1="
    rows.sort(key=lambda row: (row.rank if ranked and row.rank is not None else 0, -row.tokens_per_s))
    return CompareSummary(rows, check_lossless(runs, reference), BASELINE if base is not None else None,
                          ranked=ranked, runs=n_runs, greedy=bool(runs) and all(r.greedy for r in runs),
                          models=raced_models(runs))


def raced_models(runs: Sequence[MethodRun]) -> list[str]:
    """'target X (float32, 538 MB)', then each draft model raced ('self:int4 (int4 g32, +84 MB)'), once each."""
    out: list[str] = []
    for r in runs:
        h = r.header
        if h is None or not h.target_precision:
            continue
        t = f"target {h.target} ({model_note(h.target_precision, h.target_bytes)})"
        d = f"draft {h.draft} ({model_note(h.draft_precision, h.draft_bytes, added=is_self_draft(h.draft))})" \
            if h.draft_precision else ""
        for item in (t, d):
            if item and item not in out:
                out.append(item)
    return out


def runs_from_recording(recording: Recording) -> list[MethodRun]:
    """One run per recorded method: a compare recording holds one session per method and run.

    Sessions with the same label are repeats of one method (`compare
    --repeats`): the median one is shown, and every one's tokens/s kept.
    """
    groups: dict[tuple[str, int], list[MethodRun]] = {}
    for s in recording.sessions:   # a chat's turns share a label but not a turn number
        run = MethodRun.from_session(s)
        groups.setdefault((run.label, s.header.turn), []).append(run)
    return [g[0] if len(g) == 1 else MethodRun.from_repeats(g) for g in groups.values()]
