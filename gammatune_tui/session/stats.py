"""Running metrics over an event stream (SPEC §5).

One implementation for the TUI's stats panel, compare's summary, replay's
printout and the benchmark, so the same stream always gives the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.acceptance import count_step, position_rates
from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent


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


@dataclass
class RunningStats:
    """Accumulates one session; feed it every event with `add`."""

    window: int = 20
    header: SessionHeader | None = None
    summary: SessionSummary | None = None
    steps: int = 0
    tokens: int = 0
    drafted: int = 0
    accepted: int = 0
    draft_calls: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0
    elapsed_s: float = 0.0
    gamma_sum: int = 0
    pos_drafted: list[int] = field(default_factory=list)
    pos_accepted: list[int] = field(default_factory=list)
    recent: list[tuple[int, int]] = field(default_factory=list)
    last_step: StepEvent | None = None

    def add(self, event: Event) -> None:
        if isinstance(event, SessionHeader):
            self.header = event
        elif isinstance(event, StepEvent):
            self._add_step(event)
        elif isinstance(event, SessionSummary):
            self.summary = event

    def _add_step(self, ev: StepEvent) -> None:
        d = len(ev.drafted)
        self.steps += 1
        self.tokens += len(ev.emitted)
        self.drafted += d
        self.accepted += ev.accepted
        self.draft_calls += d
        self.draft_s += ev.draft_s
        self.verify_s += ev.verify_s
        self.elapsed_s = ev.elapsed_s or (self.elapsed_s + (ev.step_s or ev.draft_s + ev.verify_s))
        self.gamma_sum += ev.gamma
        count_step(self.pos_drafted, self.pos_accepted, d, ev.accepted)
        self.recent.append((ev.accepted, d))
        if len(self.recent) > self.window:
            del self.recent[0]
        self.last_step = ev

    # -- SPEC §5 ----------------------------------------------------------------
    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def rolling_acceptance(self) -> float:
        d = sum(x[1] for x in self.recent)
        return sum(x[0] for x in self.recent) / d if d else 0.0

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else 0.0

    @property
    def target_calls(self) -> int:
        return self.steps

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def per_position(self) -> list[float]:
        return position_rates(self.pos_drafted, self.pos_accepted)

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
    def plain_estimate_tokens_per_s(self) -> float:
        """Plain target decoding would take about one verify pass per token."""
        return 1.0 / self.t_target if self.t_target > 0 else 0.0

    @property
    def slower_than_plain(self) -> bool:
        """Speculation is losing when a step's cost exceeds that of the tokens it emits, one pass each."""
        if self.steps < 3 or self.t_target <= 0:
            return False
        recent_steps = max(1, len(self.recent))
        recent_tokens = sum(a for a, _ in self.recent) + recent_steps
        per_step = (self.draft_s + self.verify_s) / self.steps
        return per_step * recent_steps > self.t_target * recent_tokens

    @property
    def regime(self) -> str:
        return regime(self.rolling_acceptance)


def stats_of(events) -> RunningStats:
    s = RunningStats()
    for e in events:
        s.add(e)
    return s
