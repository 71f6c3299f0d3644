"""The `adaptive-k` policy (a peer's rule, after vLLM's Adaptive K); its arithmetic is in engine/policies/goodput.py.

Listed in the method registry of engine/policies/__init__.py.
"""

from __future__ import annotations

from typing import Sequence

from .goodput import CostEstimate, PositionAcceptance, best_window
from .policy_base import Policy, TokenStats, check_update as _check_update
from .policy_params import PolicyParams


class AdaptiveK(Policy):
    """vLLM's Adaptive K: the window with the most expected tokens per second (engine/policies/goodput.py).

    Per-position acceptance EMAs (weight `ema_alpha`, folded every 10 steps,
    `alpha_prior` where a position has not been reached) and the observed
    draft/verify costs give K* = argmax over [γ_min, γ_max] of E(K)/T(K);
    after K changes it holds for `cooldown` steps. Starts at γ0; never stops
    a window early.
    """

    name = "adaptive-k"
    uses = ("ema_alpha", "alpha_prior", "cooldown", "gamma_min", "gamma_max")
    may_stop_early = False

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.acceptance = PositionAcceptance()
        self.costs = CostEstimate()
        self.cooldown_left = 0

    def observe_costs(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        self.costs.observe(draft_s, drafted, verify_s, verified)

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        _check_update(accepted, drafted)
        p = self.params
        self.acceptance.add(accepted, drafted)
        if self.acceptance.fold_due():
            self.acceptance.fold(float(p.ema_alpha), float(p.alpha_prior))
        if self.cooldown_left > 0:
            self.cooldown_left -= 1
            return
        k = best_window(self.acceptance.alphas, float(p.alpha_prior), p.gamma_min, p.gamma_max, self.costs)
        if k != self.gamma:
            self.gamma = k
            self.cooldown_left = p.cooldown

    def _on_params(self) -> None:
        # new bounds act at once on the planned window; the learned estimates carry over
        self.gamma = min(self.params.gamma_max, max(self.params.gamma_min, self.gamma))
