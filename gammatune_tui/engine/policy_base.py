"""The `Policy` protocol every γ policy implements, and the helpers the policies share.

Kept apart from the policies themselves so that a new policy can live in a
file of its own (importing this module) and be listed in the method
registry of engine/policies.py without an import circle.
"""

from __future__ import annotations

from typing import Any

from .param_specs import BY_NAME, check_gamma0
from .policy_params import PolicyParams


class Policy:
    """Base policy: fixed window, never stops early, learns nothing (= specdecode)."""

    name = "specdecode"
    # True when keep_drafting can end a window early: the decoder must then read each
    # drafted token's probabilities back before drafting the next (one host sync per
    # token); otherwise it drafts the whole window on the device and reads it back with
    # the verdict, one read per step (drafting.py).
    may_stop_early: bool = False
    uses: tuple[str, ...] = ()
    """The parameters of PolicyParams this policy reads (besides γ0): what the app shows for it."""

    def __init__(self, gamma0: int, params: PolicyParams):
        self.gamma0 = check_gamma0(gamma0)
        self.params = params
        self.gamma = clip(self.gamma0, params)

    # -- protocol -----------------------------------------------------------
    def keep_drafting(self, top_prob: float, chosen_prob: float) -> bool:
        return True

    def update(self, accepted: int, drafted: int) -> None:
        check_update(accepted, drafted)

    def observe_costs(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        """What the step just taken cost: drafting `drafted` tokens, verifying `verified` in one pass.

        Called once per step just before `update` — live with the decoder's
        measured seconds, in the simulator with the cost model's prices. Only
        policies that plan by cost (adaptive-k) use it.
        """

    def set_params(self, **params: Any) -> None:
        self.params = PolicyParams.build(self.params, **params)
        self._on_params()

    # -- helpers ------------------------------------------------------------
    def _on_params(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        """Parameters in force, as recorded in each StepEvent: those every session records, and every one it reads."""
        d = {"gamma0": self.gamma0, **self.params.to_json()}
        for name in self.uses:
            d.setdefault(name, BY_NAME[name].to_json(getattr(self.params, name)))
        return d


def clip(gamma: int, p: PolicyParams) -> int:
    return min(p.gamma_max, max(p.gamma_min, gamma))


def check_update(accepted: int, drafted: int) -> None:
    if not (0 <= accepted <= drafted):
        raise ValueError(f"accepted must be in [0, drafted], got accepted={accepted}, drafted={drafted}")
