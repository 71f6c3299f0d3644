"""The goodput arithmetic behind the `adaptive-k` policy (after vLLM's Adaptive K).

Kept apart from the policy class so each part can be checked by hand: what the
per-position acceptance estimates are after a few steps, what a step costs,
and which window maximises expected tokens per second. Pure Python, no torch,
and deterministic: the same updates and the same observed costs give the same
window, which is what lets the trace simulator replay the policy exactly.

The rule (vLLM PR #47111, docs/features/spec_decode/adaptive_k.md there):

    K* = argmax_K  E(K) / T(K),   E(K) = 1 + Σ_{k=1..K} Π_{i=1..k} α_i

E(K) is the expected number of tokens a window of K emits (the bonus or
correction included) when draft position i is accepted with probability α_i
given that position i − 1 was; T(K) is what the step costs. vLLM writes
T(K) = 1 + K·c_draft + verify_overhead in units of one target pass; here the
draft's per-token time and the target's verify time for K + 1 tokens are
measured (live: the decoder's step timings; simulated: the cost model's
prices), so T(K) = K·t_draft + T_verify(K + 1) in seconds — the same ratio
multiplied by the one-token verify time, which does not move the argmax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# vLLM folds the per-position counts into the EMA once every 10 scheduler steps
# ("per-position EMA acceptance tracking over 10-step windows"): one step's
# 0/1 outcome per position is too noisy to move an average on its own.
FOLD_STEPS = 10
# Until a cost has been observed: vLLM's documented default draft/target cost
# ratio (profiled there for Qwen2.5 0.5B → 7B AWQ on an RTX 4050), with a
# verify cost that does not grow with K (vLLM pads verification to the max K).
FALLBACK_C_DRAFT = 0.1144


def _check_cost(name: str, value: float) -> float:
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


@dataclass
class CostEstimate:
    """Running means of the step timings the decoder reports.

    The draft's time per token is Σ draft_s / Σ drafted. The verify time is
    kept per number of verified tokens k and modelled as a straight line in k
    (least squares over the per-k means, weighted by how often each k was
    seen, slope clamped at ≥ 0) so that windows not yet tried get a price;
    with one k seen so far the line is flat, vLLM's assumption.
    """

    draft_s: float = 0.0
    drafted: int = 0
    verify: dict[int, list[float]] = field(default_factory=dict)  # k → [Σ seconds, count]

    def observe(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        draft_s = _check_cost("draft_s", draft_s)
        verify_s = _check_cost("verify_s", verify_s)
        if drafted < 0 or verified < 1:
            raise ValueError(f"drafted must be >= 0 and verified >= 1, got drafted={drafted}, verified={verified}")
        if drafted:
            self.draft_s += draft_s
            self.drafted += drafted
        acc = self.verify.setdefault(verified, [0.0, 0])
        acc[0] += verify_s
        acc[1] += 1

    def draft_token_s(self) -> float | None:
        return self.draft_s / self.drafted if self.drafted else None

    def verify_line(self) -> tuple[float, float] | None:
        """(intercept at k = 0, slope) of the verify-time line, or None before any observation."""
        if not self.verify:
            return None
        n = sum(c for _, c in self.verify.values())
        k_mean = sum(k * c for k, (_, c) in self.verify.items()) / n
        v_mean = sum(s for s, _ in self.verify.values()) / n
        sxx = sum(c * (k - k_mean) ** 2 for k, (_, c) in self.verify.items())
        slope = 0.0
        if sxx > 0:
            sxy = sum((k - k_mean) * (s - c * v_mean) for k, (s, c) in self.verify.items())
            slope = max(0.0, sxy / sxx)
        return v_mean - slope * k_mean, slope

    def step_costs(self, windows: range) -> dict[int, float] | None:
        """Seconds of a step drafting K tokens, for each K in `windows`; None until both costs are known."""
        t_draft = self.draft_token_s()
        line = self.verify_line()
        if t_draft is None or line is None:
            return None
        b, s = line
        out = {k: k * t_draft + max(0.0, b + s * (k + 1)) for k in windows}
        return out if all(v > 0 for v in out.values()) else None


def expected_tokens(alphas: list[float], prior: float, k_max: int) -> list[float]:
    """E(K) for K = 0 … k_max: 1 + Σ_{k≤K} Π_{i≤k} α_i (positions never seen use the prior)."""
    out = [1.0]
    prod = 1.0
    for i in range(k_max):
        prod *= alphas[i] if i < len(alphas) else prior
        out.append(out[-1] + prod)
    return out


def best_window(alphas: list[float], prior: float, lo: int, hi: int, costs: CostEstimate) -> int:
    """The K in [lo, hi] with the most expected tokens per unit of time (the smallest K on a tie)."""
    windows = range(lo, hi + 1)
    exp = expected_tokens(alphas, prior, hi)
    step = costs.step_costs(windows)
    if step is None:  # nothing measured yet: vLLM's default ratio, flat verify cost
        step = {k: 1.0 + k * FALLBACK_C_DRAFT for k in windows}
    best, best_rate = lo, -1.0
    for k in windows:
        rate = exp[k] / step[k]
        if rate > best_rate:
            best, best_rate = k, rate
    return best


@dataclass
class PositionAcceptance:
    """α_i: an EMA of the conditional acceptance at each draft position.

    A step that drafted d tokens and accepted A reached positions 1 … min(d, A + 1)
    and accepted positions 1 … A. Counts gather for FOLD_STEPS steps, then each
    position that was reached folds its rate accepted / reached into its EMA,
    α ← (1 − w)·α + w·rate; a position never reached stays at the prior.
    """

    alphas: list[float] = field(default_factory=list)
    reached: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    steps: int = 0

    def add(self, accepted: int, drafted: int) -> None:
        n = min(drafted, accepted + 1)
        while len(self.reached) < n:
            self.reached.append(0)
            self.accepted.append(0)
        for i in range(n):
            self.reached[i] += 1
        for i in range(accepted):
            self.accepted[i] += 1
        self.steps += 1

    def fold_due(self) -> bool:
        return self.steps >= FOLD_STEPS

    def fold(self, weight: float, prior: float) -> None:
        for i, (r, a) in enumerate(zip(self.reached, self.accepted)):
            if not r:
                continue
            while len(self.alphas) <= i:
                self.alphas.append(prior)
            self.alphas[i] = (1.0 - weight) * self.alphas[i] + weight * (a / r)
        self.reached, self.accepted, self.steps = [], [], 0
