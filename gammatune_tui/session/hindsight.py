"""How close a finished greedy session came to the hindsight-optimal γ: the result, and the hook that makes it.

Under greedy decoding the text a session produced fixes what any γ policy
would have seen, so after the session one teacher-forced draft pass over that
text gives the trace, and the trace simulator's oracle (bench/sim/oracle.py) says
how fast the best window choice would have been under a cost model calibrated
on the session's own step timings. That needs the models and bench/, which
session/ may not import; so a command hands its source a `HindsightHook`
(`bench.sim.hindsight.session_hindsight`), which runs where the models are (the
UI's thread or the decoder's child process), after the session's last event
and never inside its timed loop, and returns a `Hindsight`. The result is
plain data, so it crosses the process pipe and reaches the stats panel and
`run`'s summary without either knowing how it was made.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Sequence

from ..engine.common.names import BY_SOURCE
from ..engine.common.pair import ModelPair
from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent

HindsightHook = Callable[[Any, Sequence[Event]], "Hindsight"]
"""(the loaded pair, the session's events) → its Hindsight; must be a module-level function (it is pickled)."""


@dataclass(frozen=True)
class Hindsight:
    """The session against the oracle on the same text, both priced by one cost model.

    `share` is the oracle's modelled time over the session's (1.0 = the
    session chose as well as the hindsight-optimal window at every step); the
    session's own steps are priced by the same model, so the ratio compares
    choices, not the model's error (`session_measured_s` shows that).
    """

    applicable: bool
    reason: str = ""                  # why there is no number (sampled, no steps, an error)
    brief: str = ""                   # the same in a few words, for the stats panel
    share: float = math.nan
    tokens: int = 0
    session_steps: int = 0
    oracle_steps: int = 0
    session_tokens_per_step: float = 0.0
    oracle_tokens_per_step: float = 0.0
    oracle_mean_window: float = 0.0
    oracle_plain_steps: int = 0       # steps where the oracle drafts nothing
    session_modelled_s: float = 0.0
    oracle_modelled_s: float = 0.0
    session_measured_s: float = 0.0   # the session's Σ step_s, for the cost model's fidelity
    check_s: float = 0.0              # what the check itself took, after the session

    @classmethod
    def unavailable(cls, reason: str, brief: str = "") -> "Hindsight":
        return cls(False, reason, brief or reason)

    def short(self) -> str:
        """A few words for the stats panel: the share named as the ratio of modelled speeds, beside the two
        modelled times per token it divides (oracle's / this session's), so the line's numbers agree with it.

        It used to sit beside the tokens per step ("0.88 of best γ (1.83 vs 1.87 tok/step)"), whose ratio
        (0.98) is not the share: the oracle also pays for its windows.
        """
        if not self.applicable:
            return self.brief or self.reason
        if self.tokens > 0 and self.session_modelled_s > 0 and self.oracle_modelled_s > 0:
            mine, best = (_ms(1000 * t / self.tokens) for t in (self.session_modelled_s, self.oracle_modelled_s))
            return f"{self.share:.2f} of best γ's speed ({mine} vs {best} ms/token, modelled)"
        return f"{self.share:.2f} of best γ's modelled speed"

    def line(self) -> str:
        """One line for `run`'s summary."""
        if not self.applicable:
            return f"oracle: {self.reason}"
        return (f"oracle: this session reached {self.share:.2f} of the hindsight-optimal γ's modelled speed "
                f"({self.session_tokens_per_step:.2f} tokens/step in {self.session_steps} steps; the oracle "
                f"{self.oracle_tokens_per_step:.2f} in {self.oracle_steps}, mean window {self.oracle_mean_window:.1f}, "
                f"{self.oracle_plain_steps} step{'' if self.oracle_plain_steps == 1 else 's'} without drafting) · checked in {self.check_s:.2f} s after the session")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if not math.isfinite(self.share):
            d["share"] = None
        return d


def _ms(x: float) -> str:
    """Milliseconds to three figures or so, alike on both sides of a "vs": 38.0, 5.30, 0.912."""
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def not_applicable(events: Iterable[Event]) -> Hindsight | None:
    """Why a session has no oracle comparison (None when it has one): greedy, finished sessions only."""
    header: SessionHeader | None = None
    summary: SessionSummary | None = None
    steps = 0
    for ev in events:
        if isinstance(ev, SessionHeader):
            header = ev
        elif isinstance(ev, StepEvent):
            steps += 1
        elif isinstance(ev, SessionSummary):
            summary = ev
    if header is None or summary is None:
        return Hindsight.unavailable("the session did not finish", "session unfinished")
    if summary.stop_reason == "error":
        return Hindsight.unavailable("the session ended with an error", "session failed")
    temperature = header.sampling.get("temperature", 0) if isinstance(header.sampling, dict) else 0
    if temperature not in (0, 0.0, None):
        return sampled_session(float(temperature))
    if steps == 0 or summary.tokens < 2:
        return Hindsight.unavailable("too few tokens to compare", "too few tokens")
    spec = BY_SOURCE.get(str(getattr(header, "drafter", "") or ""))
    if spec is not None and not spec.has_traces:   # a head whose drafts the simulator cannot replay yet
        return Hindsight.unavailable(f"not for drafter {spec.name} (the simulator has no traces of it)",
                                     f"not for {spec.name}")
    return None


def sampled_session(temperature: float | None = None) -> Hindsight:
    """A sampled session: the oracle needs the target's one greedy continuation."""
    at = f" (this session sampled at T={temperature:g})" if temperature else ""
    return Hindsight.unavailable(f"applies to greedy decoding only{at}",
                                 f"greedy only{f' (T={temperature:g})' if temperature else ''}")


def run_hook(hook: HindsightHook | None, pair: ModelPair, events: Sequence[Event]) -> Hindsight | None:
    """The hook's answer; a failure becomes an unavailable result (the session itself went fine)."""
    if hook is None:
        return None
    try:
        return hook(pair, events)
    except Exception as exc:  # the check is an extra: it must never break the chat
        return Hindsight.unavailable(f"the check failed ({type(exc).__name__}: {exc})", "check failed")
