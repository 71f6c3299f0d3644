"""The `costaware` policy (gammatune's own rule); its arithmetic is in engine/policies/costaware.py.

Listed in the method registry of engine/policies/__init__.py.
"""

from __future__ import annotations

from typing import Sequence

from .costaware import new_state
from .policy_base import Policy, TokenStats, check_update as _check_update, clip as _clip
from .policy_params import PolicyParams


class CostAware(Policy):
    """Drafts while one more token is worth its time (engine/policies/costaware.py); may not draft at all (γ = 0).

    A calibration table turns each drafted token's confidence into the
    chance that the window so far survives; drafting goes on while that
    chance times the mean acceptance beats the session's tokens per second
    times the marginal seconds of one more token. The planned γ is 0 (a plain
    target step) or the longest window the rule could use, within the bounds.
    """

    name = "costaware"
    uses = ("calib_weight", "calib_forget", "gamma_min", "gamma_max")
    may_stop_early = True

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.state = new_state(float(params.calib_weight), float(params.calib_forget), params.gamma_max)

    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return self.state.keep([t.chosen for t in earlier] + [chosen_prob])

    def observe_costs(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        self.state.observe_costs(draft_s, drafted, verify_s, verified)

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        _check_update(accepted, drafted)
        self.state.update(accepted, drafted, [t.chosen for t in window])
        self.gamma = self.state.plan(self.params.gamma_min, self.params.gamma_max)

    def _on_params(self) -> None:
        # the learned table carries over; its weight, forgetting and the bounds act from now on
        cal = self.state.calibration
        cal.weight, cal.forget = float(self.params.calib_weight), float(self.params.calib_forget)
        self.state.set_gamma_max(self.params.gamma_max)
        if self.gamma:
            self.gamma = _clip(self.gamma, self.params)
