"""The arithmetic behind the `costaware` policy: a stop rule priced in time, read from a calibration table.

Kept apart from the policy class (engine/policies/__init__.py) for the same reason as
goodput.py is: each part can be checked by hand, and everything here is pure
Python and deterministic, so the trace simulator replays the policy exactly.

The rule (after SpecDec++, arXiv 2405.19715, and AdaEDL, arXiv 2410.18351,
which stop drafting on an estimate that the window is already lost; priced
in seconds as vLLM's Adaptive K prices its window; and reading the draft's
confidence as the paper's GammaTune+ does):

* each drafted token's confidence (the draft's probability of the token it
  chose) is mapped through the calibration table (engine/policies/confidence.py) to
  P_k, the probability that all k tokens drafted so far will be accepted;
* drafting on to m > k tokens is expected to add P_k · (ā + ā² + … + ā^(m−k))
  tokens (ā: the acceptance of a token whose confidence is not known yet)
  and costs C(m) − C(k) seconds, C(k) = k · t_draft + T_verify(k + 1), with
  t_draft and T_verify measured (live: the decoder's step timings; in the
  simulator: the cost model's prices, so replays stay exact);
* the session currently earns R tokens per second (decayed sums of tokens
  and seconds). Keep drafting while some m > k (up to γ_max) has
  gain > R · (C(m) − C(k)). At k = 0 (P_0 = 1) the same test decides whether
  to draft at all: a step that fails it is a plain target step (γ = 0, the
  oracle's "do not draft").

This is the stopping rule that maximises the tokens per second of a renewal
process (a step is a renewal; go on while the gain per extra second beats the
rate already achieved), with R measured rather than solved for. Looking past
the next token, rather than at it alone, matters because a measured verify
curve is not convex: on the demo pair on CPU verifying 3 tokens is cheaper
than verifying 2, so a myopic rule would stop just before the cheap window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .confidence import Calibration, Prior, shipped_prior
from .goodput import FALLBACK_C_DRAFT, CostEstimate


@dataclass
class CostAwareState:
    """What the costaware policy knows: the table, the step costs and the rate earned (learned in `update` only)."""

    calibration: Calibration
    gamma_max: int = 16
    costs: CostEstimate = field(default_factory=CostEstimate)
    tokens: float = 0.0  # decayed tokens emitted …
    seconds: float = 0.0  # … and the decayed seconds they took (draft + verify)
    last_s: float | None = None
    _prices: dict[int, float] | None = None  # R · C(k), for this step: a memo of `priced()`, dropped on any change

    # -- what a step costs and earns ------------------------------------------------------------
    def observe_costs(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        self.costs.observe(draft_s, drafted, verify_s, verified)
        self.last_s = float(draft_s) + float(verify_s)

    def priced(self) -> dict[int, float]:
        """R · C(k) for k = 0 … γ_max: a window's cost in the tokens that time would have earned.

        T_verify(k) is the mean of the passes seen with k tokens, else the
        straight line through them (goodput.CostEstimate). Before anything is
        measured: vLLM's default draft/target cost ratio at one token per pass.
        """
        if self._prices is not None:
            return self._prices
        c = self.costs
        t_draft, line = c.draft_token_s(), c.verify_line()
        if t_draft is None or line is None or self.seconds <= 0:
            out = {k: k * FALLBACK_C_DRAFT for k in range(self.gamma_max + 1)}
        else:
            rate = self.tokens / self.seconds
            b, s = line

            def verify(n: int) -> float:
                seen = c.verify.get(n)
                return seen[0] / seen[1] if seen else max(0.0, b + s * n)

            out = {k: rate * (k * t_draft + verify(k + 1)) for k in range(self.gamma_max + 1)}
        self._prices = out
        return out

    # -- the rule ---------------------------------------------------------------------------------
    def worth_going_on(self, k: int, p_all: float) -> bool:
        """With k tokens drafted that all survive with probability p_all: does some longer window pay?"""
        prices = self.priced()
        a = self.calibration.mean()
        gain, term = 0.0, p_all
        for m in range(k + 1, self.gamma_max + 1):
            term *= a
            gain += term
            if gain > prices[m] - prices[k]:
                return True
        return False

    def keep(self, confidences: Sequence[float]) -> bool:
        """After drafting tokens of these confidences (the window so far, in order): is the next one worth
        drafting? A pure question: P_k is the product of the table's acceptances, taken in order."""
        p_all = 1.0
        for c in confidences:
            p_all *= self.calibration.accept(c)
        return self.worth_going_on(len(confidences), p_all)

    def update(self, accepted: int, drafted: int, confidences: Sequence[float]) -> None:
        """One verified window: the table learns its tokens' confidences, the rate its tokens and seconds."""
        self.calibration.learn(list(confidences), accepted, drafted)
        f = self.calibration.forget
        if self.last_s is not None:
            self.tokens = self.tokens * f + accepted + 1
            self.seconds = self.seconds * f + self.last_s
        self.last_s = None
        self._prices = None

    def set_gamma_max(self, gamma_max: int) -> None:
        """The longest window priced from now on; the prices memo holds windows up to the old bound only."""
        self.gamma_max = gamma_max
        self._prices = None

    def plan(self, gamma_min: int, gamma_max: int) -> int:
        """The next window: 0 when no window pays for its first token, else the most the rule could draft.

        The rule can go on after token k only if it would with P_k = best^k
        (no bin promises more than `best`), so no window is longer than the
        first k where that fails; it is clipped to [γ_min, γ_max]. The rule
        itself ends most windows before it.
        """
        self.set_gamma_max(gamma_max)
        if not self.worth_going_on(0, 1.0):
            return 0
        best = self.calibration.best()
        k, p = 1, best
        while k < gamma_max and self.worth_going_on(k, p):
            k += 1
            p *= best
        return min(gamma_max, max(gamma_min, k))


def new_state(weight: float, forget: float, gamma_max: int, prior: Prior | None = None) -> CostAwareState:
    """A fresh state; `weight` and `forget` are `calib_weight` and `calib_forget`, checked where every parameter
    is (engine/policies/param_specs.py)."""
    return CostAwareState(Calibration(prior or shipped_prior(), float(weight), float(forget)), gamma_max)
