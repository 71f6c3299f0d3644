"""The `Policy` protocol every γ policy implements, and the helpers the policies share.

Kept apart from the policies themselves so that a new policy can live in a
file of its own (importing this module) and be listed in the method
registry of engine/policies/__init__.py without an import circle.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from .param_specs import BY_NAME, check_gamma0
from .policy_params import PolicyParams


class TokenStats(NamedTuple):
    """What a policy may read of one drafted token (docs/spec.md §2.1): from the draft distribution q it was drawn from.

    `top` is q's largest probability, `chosen` q of the drafted token and
    `entropy` H(q) in nats; q is the served law when sampling, the raw
    softmax when greedy. A point-mass source (prompt lookup) gives its
    stand-in probabilities and entropy 0. NaN where it is not known (a trace
    recorded before entropy was kept).
    """

    top: float
    chosen: float
    entropy: float


class Policy:
    """Base policy: fixed window, never stops early, learns nothing (= specdecode).

    The protocol is *ask, then learn*: `keep_drafting` is a pure question
    (the same arguments give the same answer, and asking changes nothing),
    so a caller may ask about a token or not, once or again; the policy
    learns only in `update`, which is given the whole window drafted (each
    token's `TokenStats`) with its outcome, after `observe_costs`.
    """

    name = "specdecode"
    # True when keep_drafting can end a window early: the decoder must then read each
    # drafted token's probabilities back before drafting the next (one host sync per
    # token); otherwise it drafts the whole window on the device and reads it back with
    # the verdict, one read per step (drafting/).
    may_stop_early: bool = False
    uses: tuple[str, ...] = ()
    """The parameters of PolicyParams this policy reads (besides γ0): what the app shows for it."""

    def __init__(self, gamma0: int, params: PolicyParams):
        self.gamma0 = check_gamma0(gamma0)
        self.params = params
        self.gamma = clip(self.gamma0, params)

    # -- protocol -----------------------------------------------------------
    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        """After drafting a token with these statistics, should the window go on? `earlier`: the window's
        tokens before it. Asked only of a policy that `may_stop_early`; never changes the policy."""
        return True

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        """Learn from a verified window: `accepted` of `drafted` tokens, `window` their statistics in order
        (empty where a caller has none, e.g. a hand-worked test of a policy that reads none)."""
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
