"""What a step costs on this machine: the simulator's clock.

Kept apart from `play_trace` because it is the only part of the
simulation that is measured rather than exact: `calibrate` fits it to the
decoder's own step timings, and `CostModel.verify` interpolates the target's
pass time between the window sizes it saw.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

from .sim_trace import SimTrace


@dataclass
class CostModel:
    """Seconds for the parts of a step, measured on this machine.

    A step that drafts d tokens and emits e costs
    step_s + [d > 0]·draft_step_s + d·draft_token_s + verify_s[d + 1] + e·emit_token_s.

    `draft_step_s` is what a drafting step pays once whatever its window (the
    first draft forward also feeds the tokens the draft has not cached yet,
    and the window is set up): without it a cost per token read off long
    windows underprices short ones. 0 where it was not measured (older cost
    models, `--costs`), and then left out of the JSON.
    """

    draft_token_s: float
    verify_s: dict[int, float]  # k tokens in one target pass → seconds
    step_s: float = 0.0
    emit_token_s: float = 0.0
    session_s: float = 0.0  # per-session time outside the steps beyond the trace's own (prefill, header)
    outside_s: float = 0.0  # measured per-session time outside the steps (calibration sessions, mean)
    # target-only decoding, seconds per token (prefill included), timed in the same pass as the rest, so that
    # "× target-only" compares like with like; 0: not timed (then the traces' own recording time prices it)
    plain_token_s: float = 0.0
    draft_step_s: float = 0.0

    def draft(self, d: int) -> float:
        """Seconds to draft a window of d tokens (nothing for d = 0)."""
        return d * self.draft_token_s + self.draft_step_s if d > 0 else 0.0

    def verify(self, k: int) -> float:
        v = self.verify_s.get(k)
        if v is not None:
            return v
        ks = sorted(self.verify_s)
        if len(ks) == 1:
            return self.verify_s[ks[0]]
        if k > ks[-1]:  # extrapolate linearly from the last two points
            k1, k2 = ks[-2], ks[-1]
            slope = (self.verify_s[k2] - self.verify_s[k1]) / (k2 - k1)
            return max(self.verify_s[k2], self.verify_s[k2] + slope * (k - k2))
        if k < ks[0]:  # below the first point: linearly from the first two, never below half of it
            k1, k2 = ks[0], ks[1]
            slope = (self.verify_s[k2] - self.verify_s[k1]) / (k2 - k1)
            return max(0.5 * self.verify_s[k1], min(self.verify_s[k1], self.verify_s[k1] - slope * (k1 - k)))
        lo = max(x for x in ks if x < k)
        hi = min(x for x in ks if x > k)
        f = (k - lo) / (hi - lo)
        return self.verify_s[lo] * (1 - f) + self.verify_s[hi] * f

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["verify_s"] = {str(k): v for k, v in self.verify_s.items()}
        if not self.draft_step_s:
            del d["draft_step_s"]   # a model without it prices as before, and writes as before
        d["c"] = self.verify(1) / self.draft_token_s if self.draft_token_s > 0 else math.nan
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "CostModel":
        return cls(float(d["draft_token_s"]), {int(k): float(v) for k, v in d["verify_s"].items()},
                   float(d.get("step_s", 0.0)), float(d.get("emit_token_s", 0.0)), float(d.get("session_s", 0.0)),
                   float(d.get("outside_s", 0.0)), float(d.get("plain_token_s", 0.0)),
                   float(d.get("draft_step_s", 0.0)))


def target_only_s(trace: SimTrace, cost: CostModel | None) -> float:
    """Target-only decoding of a trace's tokens: priced by the cost model's own timing of it when it has one
    (the same pass and load as the methods' prices), else as timed while the trace was recorded."""
    if cost is not None and cost.plain_token_s > 0:
        return len(trace.tokens) * cost.plain_token_s
    return trace.plain_s


MIN_SAMPLES = 5
BUSY = 2.0  # a step timed above this multiple of its window's median was slowed by another job


def typical(values: Iterable[float]) -> float:
    """The mean of `values` without the busy spells: samples above BUSY × their median are left out.

    Another job waking up for a few steps slows those steps several-fold,
    and a plain mean would hand that spike to whichever window was timed
    then. The trimmed mean used before (the middle 60 %) dropped it too, but
    also the ordinary slower steps every live session pays: from the same
    timing steps it priced the demo pair's live sessions 4.9 % fast on
    average, this mean 1.2 % (benchmarks/timing_agreement.py,
    docs/benchmarks-first-simulate.md). With one or two samples it is their mean.
    """
    v = list(values)
    if not v:
        raise ValueError("no samples")
    ceiling = BUSY * statistics.median(v)
    return statistics.fmean([x for x in v if x <= ceiling])


def calibrate(events: Iterable[Any], typical_of: Callable[[Iterable[float]], float] = typical) -> CostModel:
    """A cost model from the decoder's own step timings (the "small timing pass").

    Feed it the events of live sessions that take different windows (the
    timing pass: one session that takes each window of CALIBRATION_GAMMAS
    and γ = 0 in turn, bench/modes/trace_cache.py). Timing the real
    decoder rather than bare forward passes means every host-side cost (the
    per-token sync, the policy call, token text, cache crops, building the
    event) is charged, and under the same machine load as the live runs.

    * draft_token_s: Σ_d n_d·D_d / Σ_d n_d·d, D_d the typical draft_s of the
      n_d steps that drafted d tokens (so a long window weighs what it drafts);
    * verify_s[k]: the typical verify_s of the steps that verified k tokens,
      for every k seen at least MIN_SAMPLES times (other k are interpolated,
      or extrapolated linearly);

    "Typical" is `typical_of`: by default `typical`, the mean without the
    steps another job slowed (benchmarks/timing_agreement.py passes the
    trimmed mean used before, to compare).
    * step_s + e·emit_token_s: the rest of a step (step_s − draft_s − verify_s,
      plus the gap to the next step), least squares in the emitted count e,
      coefficients clamped at 0.
    """
    import numpy as np

    steps: list[Any] = []
    gaps: list[float] = []
    outside: list[float] = []
    session: list[Any] = []
    for ev in list(events) + [None]:
        t = getattr(ev, "type", None)
        if t == "step":
            session.append(ev)
            continue
        if session:  # close the previous session: the time between its steps goes to the step before
            for a, b in zip(session, session[1:]):
                gaps.append(max(0.0, (b.elapsed_s - b.step_s) - a.elapsed_s))
            gaps.append(0.0)
            if t == "summary":
                first, last = session[0], session[-1]
                outside.append((first.elapsed_s - first.step_s) + max(0.0, ev.wall_s - last.elapsed_s))
            steps.extend(session)
            session = []
    if not steps:
        raise ValueError("no step events to calibrate from")
    by_d: dict[int, list[float]] = {}
    by_k: dict[int, list[float]] = {}
    for s in steps:
        if s.drafted:
            by_d.setdefault(len(s.drafted), []).append(s.draft_s)
        by_k.setdefault(len(s.drafted) + 1, []).append(s.verify_s)
    drafted = sum(d * len(v) for d, v in by_d.items())
    draft_token_s = sum(len(v) * typical_of(v) for v in by_d.values()) / drafted if drafted else 0.0
    # windows seen only a few times (cut short by the budget at the end of a session) are noise; the
    # well-sampled ones (γ0 + 1 of each timing session) carry the model, the rest is interpolated
    verify = {k: typical_of(v) for k, v in sorted(by_k.items()) if len(v) >= MIN_SAMPLES}
    if len(verify) < 2:
        verify = {k: typical_of(v) for k, v in sorted(by_k.items())}
    if len(verify) == 1:  # one point: assume the pass cost does not grow (GPU-like), the safe side for drafts
        (k0, v0), = verify.items()
        verify[k0 + 1] = v0
    e = np.array([float(len(s.emitted)) for s in steps])
    rest = np.array([s.step_s - s.draft_s - s.verify_s + g for s, g in zip(steps, gaps)])
    X = np.column_stack([np.ones_like(e), e])
    (c0, ce), *_ = np.linalg.lstsq(X, rest, rcond=None)
    if ce < 0:
        c0, ce = float(rest.mean()), 0.0
    if c0 < 0:
        c0, ce = 0.0, max(0.0, float((rest * e).sum() / (e * e).sum()))
    return CostModel(draft_token_s=draft_token_s, verify_s=verify, step_s=float(c0), emit_token_s=float(ce),
                     outside_s=statistics.fmean(outside) if outside else 0.0)


# the windows a timing pass takes (besides γ = 0): every γ up to 9, so every window the adaptive methods
# use (γ in [1, 8] plus the bonus token: k = 2 … 10) is priced from its own steps rather than between
# its neighbours (the static runner's pass time is not smooth in k: on the demo pair verifying 4
# tokens costs nearly what 5 do), and 16 and 24 for the long windows
CALIBRATION_GAMMAS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 24)
