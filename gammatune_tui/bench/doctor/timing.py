"""The doctor's timing passes: the decoder and target-only decoding timed side by side, three times.

Kept apart from doctor.py (which turns traces and costs into verdicts)
because it is the only part that reads the clock. Each pass sweeps the
calibration windows (alternate passes in the other order), timing
target-only decoding before every session and after the last, so both sides
of a speedup are sampled across the same stretch of time. The pooled cost
model takes every cost at its fastest over all passes (other jobs only ever
make a pass slower); each pass also gives its own model, and the spread of a
prediction across them is what the doctor prints beside it.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ...engine.common.pair import ModelPair
from ...engine.policies import PolicySettings
from ...engine.common.sampling_config import SamplingConfig
from ..live import protocol
from ..live.protocol import PromptIds
from ..sim import trace_record
from ..sim.cost_model import CALIBRATION_GAMMAS, CostModel, calibrate

TIMING_TOKENS = 24  # tokens per session of the timing pass
TIMING_PASSES = 3   # sweeps over the calibration windows; each is priced on its own for the spread
PLAIN_TOKENS = 8    # target-only tokens timed before each session of the timing pass and after the last


def timing_pass(pair: ModelPair, prompt: PromptIds, tokens: int, max_window: int, sampling: SamplingConfig | None = None
                ) -> tuple[CostModel, float, list[tuple[CostModel, float]]]:
    """The pooled cost model and target-only seconds per token, and the same for each of the passes.

    Target-only decoding is timed before every one of the decoder's sessions
    and after the last (three passes, each sweeping the windows, alternate
    ones in the other order), so both sides are sampled across the same
    stretch of time; every cost is the fastest of its samples rather than their
    mean: other jobs on the machine come and go, and a busy spell that hits
    one side of the ratio would otherwise flatter or condemn the draft. The
    one-token target pass of target-only decoding is also the cost model's
    k = 1 verify pass, so a plain step costs the oracle what it costs the
    baseline (a draft that guesses nothing cannot look faster than no draft).
    With `sampling` the decoder is timed sampling (its draws and accept tests
    cost too); target-only decoding is timed greedy either way (a draw per
    token is noise beside a target pass).
    """
    every_token: list[float] = []
    every_event: list = []
    passes: list[tuple[CostModel, float]] = []
    gammas = [g for g in CALIBRATION_GAMMAS if g <= max_window]
    for r in range(TIMING_PASSES):  # passes in alternating order: a busy spell does not own one window size
        per_token: list[float] = []
        events: list = []
        for g in (gammas if r % 2 == 0 else gammas[::-1]):
            trace_record.target_run(pair, prompt.ids, PLAIN_TOKENS, pair.eos_ids, per_token)
            protocol.run_policy(pair, PolicySettings.build("specdecode", g), prompt, tokens, keep_events=events,
                                sampling=sampling)
        trace_record.target_run(pair, prompt.ids, PLAIN_TOKENS, pair.eos_ids, per_token)
        passes.append(_priced(events, per_token))
        every_token += per_token
        every_event += events
    cost, plain = _priced(every_event, every_token)
    return cost, plain, passes


def _priced(events: Sequence[Any], per_token: Sequence[float]) -> tuple[CostModel, float]:
    cost, plain = robust_costs(events), fastest(per_token)
    # a one-token target pass is what target-only decoding does per token: the oracle's plain step pays that too
    cost.verify_s = {1: plain, **{k: v for k, v in cost.verify_s.items() if k != 1}}
    return cost, plain


def fastest(values: Sequence[float]) -> float:
    """The best time seen: other jobs can only make a pass slower, never faster."""
    return min(values) if values else math.nan


def robust_costs(events: Sequence[Any]) -> CostModel:
    """`calibrate`'s cost model, with the draft and verify costs taken as the fastest of the steps' timings."""
    cost = calibrate(events)
    steps = [e for e in events if getattr(e, "type", "") == "step"]
    per_draft = [s.draft_s / len(s.drafted) for s in steps if s.drafted]
    if per_draft:
        cost.draft_token_s = fastest(per_draft)
        fit = draft_line(steps)
        if fit is not None:
            cost.draft_step_s, cost.draft_token_s = fit
    by_k: dict[int, list[float]] = {}
    for s in steps:
        by_k.setdefault(len(s.drafted) + 1, []).append(s.verify_s)
    robust = {k: fastest(by_k[k]) for k in cost.verify_s if k in by_k}
    # calibrate's one-point case adds k0 + 1 (a flat curve): keep it flat
    cost.verify_s = {k: robust.get(k, robust.get(k - 1, v)) for k, v in cost.verify_s.items()}
    return cost


DRAFT_FIT_SAMPLES = 3   # steps of one window size needed before its fastest draft time joins the line


def draft_line(steps: Sequence[Any]) -> tuple[float, float] | None:
    """(per step, per token) seconds of drafting: the line through each window size's fastest draft time.

    A step's first draft forward also feeds what the draft has not cached
    yet, and the window is set up once, so a window of d tokens costs
    a + b·d, not b·d: the fastest cost per token, read off the long windows
    of the timing pass, underprices the short ones a fixed-K server runs.
    Fitted on the cost per token, b + a/d, so that every window size weighs
    alike; None (keep the cost per token alone) with fewer than three window
    sizes, or when the line has no positive per-step part.
    """
    import numpy as np

    by_d: dict[int, list[float]] = {}
    for s in steps:
        if s.drafted:
            by_d.setdefault(len(s.drafted), []).append(s.draft_s)
    points = [(d, fastest(v)) for d, v in sorted(by_d.items()) if len(v) >= DRAFT_FIT_SAMPLES]
    if len(points) < 3:
        return None
    x = np.array([1.0 / d for d, _ in points])
    y = np.array([t / d for d, t in points])
    a, b = np.polyfit(x, y, 1)   # t/d = b + a·(1/d)
    if not (a > 0 and b > 0):
        return None
    return float(a), float(b)


__all__ = ["DRAFT_FIT_SAMPLES", "PLAIN_TOKENS", "TIMING_PASSES", "TIMING_TOKENS", "draft_line", "fastest",
           "robust_costs", "timing_pass"]
