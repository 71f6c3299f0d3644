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

`steady_verdict` sets a session's speed against that figure over a window it
names: the last `ROLLING_STEPS` steps while an answer streams, the answer's
steps once it has ended — in both, the steps' own times. Like for like:
plain's figure is the median of warm one-token steps, without a prefill, so
speculation's side leaves out the prefill and each answer's first
`WARMUP_STEPS` steps too, which pay one-time costs (the first step after a
prefill, the caches growing to the answer's first window sizes). The first
answer of a chat used to be judged with both in (its tokens/s, prefill and
warm-up steps included) and read "speculation ran slower" on the demo pair
where its later steps beat plain. An answer with fewer than `JUDGED_STEPS`
steps past its warm-up is too short to judge: the panel says so, in no red.
No measurement, no verdict: a recording or a comparison makes no claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..engine.common.pair import ModelPair
from ..errors import GammatuneError
from ..engine.common.sampling_config import SamplingConfig

WARMUP_STEPS = 3
"""Each answer's first steps, left out of the verdict: the first after the prefill and those growing the caches to
the answer's windows run 1.5-2× a later step on the demo pair (67, 54, 56 ms, then about 35:
docs/benchmarks-first-simulate.md), costs plain's median of warm steps never sees."""
JUDGED_STEPS = 10
"""Steps past the warm-up a verdict needs (the rolling window's length): fewer, and it says "too short to judge"."""

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
    window: str              # "last 10 steps (no prefill)", "this answer, steps 4-40 (no prefill)"
    judged: bool = True      # False: too few steps past the warm-up to set against plain

    @property
    def ratio(self) -> float:
        return self.tokens_per_s / self.plain.tokens_per_s if self.plain.tokens_per_s > 0 else 0.0

    @property
    def slower(self) -> bool:
        return self.judged and self.ratio < 1.0

    def figures(self) -> str:
        """'1.23× — last 10 steps 296 tok/s · plain 241 tok/s (T 0.7, measured at load)', or why there is no ratio."""
        if not self.judged:
            return f"too short to judge — {self.window} · {self.plain.describe()}"
        return f"{self.ratio:.2f}× — {self.window} {self.tokens_per_s:,.0f} tok/s · {self.plain.describe()}"

    def warning(self) -> str:
        """The sentence the panel stands out with when speculation loses ('' when it does not)."""
        if not self.slower:
            return ""
        return f"⚠ {self.window}: speculation ran slower than plain target decoding"


def steady_verdict(steps: Sequence[tuple[int, float]], plain: PlainSpeed, finished: bool,
                   window: int = JUDGED_STEPS) -> SpeedVerdict | None:
    """`steps` (tokens, seconds of each step of one answer, in order) against `plain`, warm-up left out.

    While the answer streams: its last `window` steps; once it ended: all its steps past the warm-up.
    None when the steps took no time (nothing to divide by).
    """
    steady = list(steps[WARMUP_STEPS:])
    if len(steady) < JUDGED_STEPS:
        where = "this answer" if finished else "so far"
        return SpeedVerdict(0.0, plain, f"{where} {len(steps)} steps, the first {WARMUP_STEPS} warming up", False)
    if finished:
        label = f"this answer, steps {WARMUP_STEPS + 1}-{len(steps)} (no prefill)"
    else:
        steady = steady[-window:]
        label = f"last {len(steady)} steps (no prefill)"
    seconds = sum(t for _, t in steady)
    if seconds <= 0:
        return None
    return SpeedVerdict(sum(n for n, _ in steady) / seconds, plain, label)


__all__ = ["JUDGED_STEPS", "PLAIN_STEPS", "WARMUP_STEPS", "steady_verdict", "PlainSpeed", "SpeedVerdict", "measure_plain", "refresh_plain", "sampling_key",
           "sampling_words"]
