"""Running metrics over an event stream (docs/spec.md §5).

One implementation for the TUI's stats panel, compare's summary, replay's
printout and the benchmark, so the same stream always gives the same numbers.
The counts are the engine's one tally (`engine.events.tally.SessionTally`, which
also makes the decoder's summary); this adds what only a stream shows:
emitted tokens, elapsed time, mean γ and the recent acceptance.

"Recent" is one window everywhere, `ROLLING_STEPS`: the stats panel's rolling
α and regime, the chart's rolling-α line and the compare panes read it, so
the numbers beside each other always cover the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ..engine.events.tally import SessionTally, speculative_decoding
from ..engine.common.names import BY_SOURCE
from .hindsight import Hindsight
from .plain_speed import PlainSpeed, SpeedVerdict, steady_verdict


ROLLING_STEPS = 10
"""The steps that "recent" / "rolling" acceptance covers, wherever it is shown (long enough to steady the
ratio on a few drafted tokens a step, short enough to follow a change of regime within a sentence)."""


def rolling_acceptance_series(accepted: Sequence[int], drafted: Sequence[int],
                              window: int = ROLLING_STEPS) -> list[float]:
    """α over the last `window` steps, at every step (accepted / drafted over those steps; 0 when none drafted)."""
    out: list[float] = []
    acc = dra = 0
    for i, (a, d) in enumerate(zip(accepted, drafted)):
        acc += a
        dra += d
        if i >= window:
            acc -= accepted[i - window]
            dra -= drafted[i - window]
        out.append(acc / dra if dra else 0.0)
    return out


def modeled_cost(n_tokens: float, alpha: float, gamma: float, c: float, t_draft: float) -> float:
    """The paper's eq. 6: N/(αγ+1)·(c+γ)·T_draft."""
    return n_tokens / (alpha * gamma + 1.0) * (c + gamma) * t_draft


def regime(rolling_alpha: float) -> str:
    """The paper's §4 regimes, read off the recent acceptance rate."""
    if rolling_alpha >= 0.75:
        return "easy"
    if rolling_alpha >= 0.35:
        return "moderate"
    return "difficult"


def _from_tally(name: str) -> property:
    """A read-only view of one of the tally's counts or rates."""
    return property(lambda self: getattr(self.tally, name), doc=f"The tally's `{name}`.")


def _from_text(drafter: str) -> bool:
    """Whether a drafter proposes from the text alone, with no forward to count (the registry's point-mass
    rows); a name the registry does not know (an older recording's) counts as such, as it always did."""
    spec = BY_SOURCE.get(drafter)
    return drafter not in ("", "model") and (spec is None or spec.point_mass)


@dataclass
class RunningStats:
    """Accumulates one session; feed it every event with `add`."""

    window: int = ROLLING_STEPS
    header: SessionHeader | None = None
    summary: SessionSummary | None = None
    tally: SessionTally = field(default_factory=SessionTally)
    tokens: int = 0
    elapsed_s: float = 0.0
    gamma_sum: int = 0
    recent: list[tuple[int, int]] = field(default_factory=list)
    hindsight: Hindsight | None = None  # set after the session by a source that checks it against the oracle
    plain: PlainSpeed | None = None     # plain target decoding measured by a live source (session/plain_speed.py)
    recent_speed: list[tuple[int, float]] = field(default_factory=list)   # (tokens, seconds) of the recent steps
    step_accepted: list[int] = field(default_factory=list)   # every step's accepted and drafted counts: vLLM's
    step_drafted: list[int] = field(default_factory=list)    # `detailed` per-step arrays
    step_speed: list[tuple[int, float]] = field(default_factory=list)   # (tokens, seconds) of every step

    def add(self, event: Event) -> None:
        if isinstance(event, SessionHeader):
            self.header = event
        elif isinstance(event, StepEvent):
            self._add_step(event)
        elif isinstance(event, SessionSummary):
            self.summary = event

    def _add_step(self, ev: StepEvent) -> None:
        d = len(ev.drafted)
        # an event does not say how many draft forwards its step took: count one per drafted token (a model's
        # or a head's chained step), none for a source that proposes from the text (prompt lookup runs no model)
        calls = 0 if self.header is not None and _from_text(self.header.drafter) else d
        self.tally.add_step(d, ev.accepted, calls, ev.draft_s, ev.verify_s)
        self.tokens += len(ev.emitted)
        self.elapsed_s = ev.elapsed_s or (self.elapsed_s + (ev.step_s or ev.draft_s + ev.verify_s))
        self.gamma_sum += ev.gamma
        self.recent.append((ev.accepted, d))
        self.step_accepted.append(ev.accepted)
        self.step_drafted.append(d)
        self.recent_speed.append((len(ev.emitted), ev.step_s or (ev.draft_s + ev.verify_s)))
        self.step_speed.append(self.recent_speed[-1])
        if len(self.recent) > self.window:
            del self.recent[0]
            del self.recent_speed[0]

    # -- the tally's counts (docs/spec.md §5) -----------------------------------------------------
    steps = _from_tally("steps")
    drafted = _from_tally("drafted")
    accepted = _from_tally("accepted")
    target_calls = _from_tally("target_calls")
    draft_calls = _from_tally("draft_calls")
    draft_s = _from_tally("draft_s")
    verify_s = _from_tally("verify_s")
    acceptance_rate = _from_tally("acceptance_rate")
    per_position = _from_tally("per_position")

    # -- read off the stream -------------------------------------------------------------
    @property
    def rolling_acceptance(self) -> float:
        d = sum(x[1] for x in self.recent)
        return sum(x[0] for x in self.recent) / d if d else 0.0

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def mean_gamma(self) -> float:
        return self.gamma_sum / self.steps if self.steps else 0.0

    @property
    def t_draft(self) -> float:
        """Measured seconds per drafted token."""
        return self.draft_s / self.draft_calls if self.draft_calls else 0.0

    @property
    def t_target(self) -> float:
        """Measured seconds per verify pass."""
        return self.verify_s / self.steps if self.steps else 0.0

    @property
    def c(self) -> float:
        """c = T_target / T_draft (paper eq. 1), measured."""
        return self.t_target / self.t_draft if self.t_draft > 0 else 0.0

    @property
    def modeled_cost_s(self) -> float:
        return modeled_cost(self.tokens, self.acceptance_rate, self.mean_gamma, self.c, self.t_draft)

    @property
    def measured_cost_s(self) -> float:
        return self.draft_s + self.verify_s

    @property
    def recent_tokens_per_s(self) -> float:
        """Tokens per second over the recent steps, by their own times (no prefill)."""
        seconds = sum(t for _, t in self.recent_speed)
        return sum(n for n, _ in self.recent_speed) / seconds if seconds > 0 else 0.0

    @property
    def speed_verdict(self) -> SpeedVerdict | None:
        """This session against plain decoding measured on this machine, like for like (session/plain_speed.py):
        the steps' own times, past the answer's warm-up, over the recent steps while the answer streams and
        all of them once it ended ("too short to judge" before there are enough); None without a measurement
        or before 3 steps. ("no prefill": the panel's tokens/s above counts the prompt's prefill, this does not.)"""
        if self.plain is None or self.steps < 3:
            return None
        return steady_verdict(self.step_speed, self.plain, self.summary is not None, self.window)

    @property
    def speculative_decoding(self) -> dict:
        """The session in vLLM's per-request spec-decode terms, per-step arrays included (docs/deploy.md)."""
        return speculative_decoding(self.tally, (self.step_accepted, self.step_drafted))

    @property
    def mean_acceptance_length(self) -> float:
        """vLLM's mean acceptance length (= SGLang's avg_spec_accept_length): 1 + accepted / steps that drafted."""
        return self.speculative_decoding["mean_acceptance_length"]

    @property
    def regime(self) -> str:
        return regime(self.rolling_acceptance)


def stats_of(events: Iterable[Event]) -> RunningStats:
    """The stats of a whole stream."""
    s = RunningStats()
    for e in events:
        s.add(e)
    return s
