"""Compare's results: each method's stream, the ranked summary and the lossless check.

The summary reads every number off `RunningStats` over each method's stream
— the same numbers each pane of the compare screen shows. For greedy
decoding every method must produce the target's own text (SPEC §1.3); the
lossless check says so or names the first difference. Measuring the methods
is `compare_job.py`'s; a recording gives the same runs (`runs_from_recording`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from .recording import RecordedSession, Recording
from .stats import RunningStats

MIN_METHODS = 2
MAX_METHODS = 6
BASELINE = "specdecode"


@dataclass
class MethodRun:
    """One method's measured stream and the stats every view shows for it."""

    label: str
    events: list[Event] = field(default_factory=list)
    stats: RunningStats = field(default_factory=RunningStats)

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


@dataclass(frozen=True)
class SummaryRow:
    rank: int
    label: str
    method: str
    tokens: int
    tokens_per_s: float
    speedup: float | None     # over specdecode; None when specdecode is not among the methods
    acceptance_rate: float
    tokens_per_step: float
    target_calls: int
    draft_calls: int
    elapsed_s: float
    stop_reason: str


@dataclass(frozen=True)
class Lossless:
    """The greedy check: all texts identical, or where they first part."""

    checked: bool             # False when sampling (texts may differ legitimately)
    identical: bool
    position: int | None = None   # first differing token index
    method: str = ""              # the first method that differs from the reference
    reference: str = ""           # the method compared against (the first one)

    @property
    def message(self) -> str:
        if not self.checked:
            return "sampling (temperature > 0): texts may differ between methods; the output law is the target's"
        if self.identical:
            return "lossless: every method produced the same tokens (greedy)"
        return (f"NOT lossless: {self.method} differs from {self.reference} "
                f"at token {self.position} (greedy decoding should give identical text)")


@dataclass(frozen=True)
class CompareSummary:
    rows: list[SummaryRow]
    lossless: Lossless
    baseline: str | None

    def row(self, label: str) -> SummaryRow:
        return next(r for r in self.rows if r.label == label)


def check_lossless(runs: Sequence[MethodRun]) -> Lossless:
    if not runs or not all(r.greedy for r in runs):
        return Lossless(checked=False, identical=False)
    ref = runs[0]
    ref_ids = ref.token_ids
    first: tuple[int, str] | None = None
    for r in runs[1:]:
        ids = r.token_ids
        n = min(len(ids), len(ref_ids))
        pos = next((i for i in range(n) if ids[i] != ref_ids[i]), None)
        if pos is None and len(ids) != len(ref_ids):
            # One stopped earlier: only a difference when neither hit its budget the same way.
            rs, ss = ref.summary, r.summary
            if not (rs and ss and "stopped" in (rs.stop_reason, ss.stop_reason)):
                pos = n
        if pos is not None and (first is None or pos < first[0]):
            first = (pos, r.label)
    if first is None:
        return Lossless(True, True, reference=ref.label)
    return Lossless(True, False, first[0], first[1], ref.label)


def summarize(runs: Sequence[MethodRun]) -> CompareSummary:
    """Ranks by tokens/s; speedup is over `specdecode` when it ran."""
    base = next((r for r in runs if r.method == BASELINE), None)
    base_tps = base.stats.tokens_per_s if base is not None else 0.0
    order = sorted(runs, key=lambda r: -r.stats.tokens_per_s)
    rows = []
    for rank, r in enumerate(order, start=1):
        s = r.stats
        rows.append(SummaryRow(
            rank=rank, label=r.label, method=r.method, tokens=s.tokens, tokens_per_s=s.tokens_per_s,
            speedup=(s.tokens_per_s / base_tps) if base is not None and base_tps > 0 else None,
            acceptance_rate=s.acceptance_rate, tokens_per_step=s.tokens_per_step,
            target_calls=s.target_calls, draft_calls=s.draft_calls, elapsed_s=s.elapsed_s,
            stop_reason=r.summary.stop_reason if r.summary else "cut off",
        ))
    return CompareSummary(rows, check_lossless(runs), BASELINE if base is not None else None)


def runs_from_recording(recording: Recording) -> list[MethodRun]:
    """One run per recorded session (a compare recording holds one per method)."""
    return [MethodRun.from_session(s) for s in recording.sessions]
