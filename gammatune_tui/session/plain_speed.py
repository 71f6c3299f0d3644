"""How fast plain target-only decoding runs on this machine now, and what a chat's speed says against it.

The chat used to call speculation slower than plain decoding by pricing a
plain token at one verify pass; a verify pass checks several tokens, so the
"plain" figure it printed (171 tok/s) was far under what plain decoding
measures (compare: 241 tok/s at T 0.7, 290 greedy), and its warning could
contradict the tokens/s printed above it. Here "plain" is measured: the
target alone, one token per forward through the pair's own runner
(`engine.plain.plain_step_seconds`), timed while the user waits for nothing
(after loading, and again after a turn when the sampling it ran with has
changed: greedy and sampled steps cost differently).

`speed_verdict` sets a session's speed against that figure over a window it
names: the last `ROLLING_STEPS` steps while an answer streams (the steps'
own times, prefill excluded, as plain's figure is), the whole answer once it
has ended (its tokens/s, the figure the panel prints beside it). No
measurement, no verdict: a recording or a comparison makes no claim.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.common.pair import ModelPair
from ..errors import GammatuneError
from ..engine.common.sampling_config import SamplingConfig

PLAIN_STEPS = 24
"""One-token target steps timed per measurement (their median is kept): about 0.1 s on the demo pair,
1 s on SmolLM2-135M in float32 on 2 cores."""


@dataclass(frozen=True)
class PlainSpeed:
    """Plain target-only decoding's speed, measured here: tokens per second, under which sampling and when."""

    tokens_per_s: float
    sampling: str            # "greedy" or "T 0.7, top-p 0.9"
    when: str                # "at load", "after turn 2"
    key: tuple = ()          # what a step's cost depends on: greedy or not, top-k, top-p

    def describe(self) -> str:
        return f"plain {self.tokens_per_s:,.0f} tok/s ({self.sampling}, measured {self.when})"


def sampling_key(sampling: SamplingConfig) -> tuple:
    """What a plain step's cost depends on: a sampled step draws (and may sort, for top-k/top-p), a greedy one does not."""
    return (sampling.greedy, sampling.top_k, sampling.top_p)


def sampling_words(sampling: SamplingConfig) -> str:
    if sampling.greedy:
        return "greedy"
    extra = (f", top-k {sampling.top_k}" if sampling.top_k else "") + \
        (f", top-p {sampling.top_p:g}" if sampling.top_p < 1 else "")
    return f"T {sampling.temperature:g}{extra}"


def measure_plain(pair: ModelPair, sampling: SamplingConfig, when: str) -> PlainSpeed | None:
    """Time plain target steps now; None when the pair cannot be timed (a context too short for the timing)."""
    from ..engine.plain import plain_step_seconds

    try:
        seconds = plain_step_seconds(pair, sampling, PLAIN_STEPS)
    except GammatuneError:   # no figure rather than a wrong one
        return None
    if seconds <= 0:
        return None
    return PlainSpeed(1.0 / seconds, sampling_words(sampling), when, sampling_key(sampling))


def refresh_plain(pair: ModelPair, sampling: SamplingConfig, current: PlainSpeed | None, when: str) -> PlainSpeed | None:
    """`current`, or a new measurement when the sampling in force costs differently from the one it timed."""
    if current is not None and current.key == sampling_key(sampling):
        return current
    return measure_plain(pair, sampling, when) or current


@dataclass(frozen=True)
class SpeedVerdict:
    """A session's speed against plain decoding, over a named window."""

    tokens_per_s: float
    plain: PlainSpeed
    window: str              # "last 10 steps", "this answer"

    @property
    def ratio(self) -> float:
        return self.tokens_per_s / self.plain.tokens_per_s if self.plain.tokens_per_s > 0 else 0.0

    @property
    def slower(self) -> bool:
        return self.ratio < 1.0

    def figures(self) -> str:
        """'1.23× — last 10 steps 296 tok/s · plain 241 tok/s (T 0.7, measured at load)'."""
        return f"{self.ratio:.2f}× — {self.window} {self.tokens_per_s:,.0f} tok/s · {self.plain.describe()}"

    def warning(self) -> str:
        """The sentence the panel stands out with when speculation loses ('' when it does not)."""
        if not self.slower:
            return ""
        return f"⚠ {self.window}: speculation ran slower than plain target decoding"


__all__ = ["PLAIN_STEPS", "PlainSpeed", "SpeedVerdict", "measure_plain", "refresh_plain", "sampling_key",
           "sampling_words"]
