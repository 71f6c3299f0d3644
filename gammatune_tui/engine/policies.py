"""The speculation-length (γ) policies of SPEC §2: the paper's five, `adaptive-k` and `costaware`.

Pure Python and deterministic, so the trace simulator can replay a policy
exactly, the TUI can swap one between two steps, and the tests can check them
against hand-worked traces. Every policy plans within [γ_min, γ_max] (costaware
may also plan 0: a plain target step); bounds the caller did not set widen to
take in γ0, bounds it did set clip the first window (`_fit_bounds`). γ̄ is kept as an exact rational (`Fraction`): η is
read as the decimal the user typed, so a γ̄ that is 12 in real arithmetic
gives γ = 12, never 13 through floating-point drift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameter
from .confidence import roc_threshold  # noqa: F401  (re-exported)
from .costaware import new_state
from .goodput import CostEstimate, PositionAcceptance, best_window
from .policy_params import (  # noqa: F401  (re-exported: the policies' public names)
    ADAPTIVE_K_PARAMS, COSTAWARE_PARAMS, DEFAULT_ALPHA_PRIOR, DEFAULT_CALIB_FORGET, DEFAULT_CALIB_WEIGHT,
    DEFAULT_COOLDOWN, DEFAULT_DELTA, DEFAULT_EMA_ALPHA, DEFAULT_ETA, DEFAULT_GAMMA_MAX, DEFAULT_GAMMA_MIN,
    DEFAULT_GAMMA0, DEFAULT_TAU, METHODS, OWN_PARAMS, PAPER_DEFAULTS, PARAM_NAMES, PolicyParams, _check_gamma0,
    check_method, parse_methods,
)


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
        self.gamma0 = _check_gamma0(gamma0)
        self.params = params
        self.gamma = _clip(self.gamma0, params)

    # -- protocol -----------------------------------------------------------
    def keep_drafting(self, top_prob: float, chosen_prob: float) -> bool:
        return True

    def update(self, accepted: int, drafted: int) -> None:
        _check_update(accepted, drafted)

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
        """Parameters in force, as recorded in each StepEvent."""
        d = {"gamma0": self.gamma0, **self.params.to_json()}
        return d


def _clip(gamma: int, p: PolicyParams) -> int:
    return min(p.gamma_max, max(p.gamma_min, gamma))


def _fit_bounds(gamma0: int, params: PolicyParams, given: dict[str, Any]) -> PolicyParams:
    """γ0 outside the bounds: a bound the caller left at its default moves to γ0; one it set stays.

    So `--gamma 1` runs at 1 (γ_min follows it) and `--gamma 100` may grow to
    100, while `--gamma 100 --gamma-max 16` starts at 16 (the CLI refuses that
    pair before it gets here, naming both flags).
    """
    changes: dict[str, int] = {}
    if gamma0 < params.gamma_min and given.get("gamma_min") is None:
        changes["gamma_min"] = gamma0
    if gamma0 > params.gamma_max and given.get("gamma_max") is None:
        changes["gamma_max"] = gamma0
    return replace(params, **changes) if changes else params


def _check_update(accepted: int, drafted: int) -> None:
    if not (0 <= accepted <= drafted):
        raise ValueError(f"accepted must be in [0, drafted], got accepted={accepted}, drafted={drafted}")


class SpecDecode(Policy):
    name = "specdecode"


class HFHeuristic(Policy):
    """transformers' "heuristic" schedule: +2 after a fully accepted window, else −1, within [γ_min, γ_max].

    transformers' own schedule has a floor of 1 and no cap (its
    num_assistant_tokens grows without limit on a run of full windows);
    gammatune clips it to the γ bounds every other policy plans within.
    """

    name = "hf-heuristic"
    uses = ("gamma_min", "gamma_max")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.n = float(self.gamma)

    def update(self, accepted: int, drafted: int) -> None:
        _check_update(accepted, drafted)
        p = self.params
        if accepted == drafted:
            self.n = min(float(p.gamma_max), self.n + 2.0)
        else:
            self.n = max(float(p.gamma_min), self.n - 1.0)
        self.gamma = _clip(int(self.n), p)

    def _on_params(self) -> None:
        self.n = min(float(self.params.gamma_max), max(float(self.params.gamma_min), self.n))
        self.gamma = _clip(int(self.n), self.params)


class AssistantThreshold(Policy):
    """Fixed window, stop drafting after a token whose chosen probability < τ.

    With `dynamic_tau`, τ follows transformers' ROC rule: once more than five
    labelled draft probabilities with both labels exist, τ becomes the
    threshold minimising fpr + 3·(1 − tpr).
    """

    name = "assistant-threshold"
    may_stop_early = True
    uses = ("tau", "dynamic_tau")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.tau = float(params.tau)
        self._tau_param = params.tau
        self._step_probs: list[float] = []
        self._probs: list[float] = []
        self._labels: list[int] = []

    def _on_params(self) -> None:
        # A learned (dynamic) τ survives changes to unrelated parameters; a new
        # τ, or switching the dynamic rule off, puts the configured value back.
        if self.params.tau != self._tau_param or not self.params.dynamic_tau:
            self.tau = float(self.params.tau)
        self._tau_param = self.params.tau

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "tau": self.tau}

    def keep_drafting(self, top_prob: float, chosen_prob: float) -> bool:
        self._step_probs.append(chosen_prob)
        return chosen_prob >= self.tau

    def update(self, accepted: int, drafted: int) -> None:
        _check_update(accepted, drafted)
        probs, self._step_probs = self._step_probs[:drafted], []
        if not self.params.dynamic_tau:
            return
        # accepted tokens are positives, the first rejected one a negative;
        # drafts after the first rejection carry no information and are dropped.
        n = min(len(probs), accepted + (1 if accepted < drafted else 0))
        self._probs.extend(probs[:n])
        self._labels.extend([1] * min(accepted, n) + [0] * (n - min(accepted, n)))
        if len(self._probs) > 5 and 0 < sum(self._labels) < len(self._labels):
            self.tau = roc_threshold(self._probs, self._labels)


class GammaTune(Policy):
    """Paper Algorithm 1 with the erratum resolved as §4.1's text says.

    After a step that planned γ and accepted A: if A == γ then A ← A + δ;
    γ̄ ← clip((1 − η)·γ̄ + η·A, γ_min, γ_max); γ ← ⌈γ̄⌉.
    """

    name = "gammatune"
    uses = ("eta", "delta", "gamma_min", "gamma_max")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.gamma_bar = Fraction(self.gamma)

    def update(self, accepted: int, drafted: int) -> None:
        _check_update(accepted, drafted)
        p = self.params
        a = Fraction(accepted)
        if accepted == self.gamma:
            a += p.delta
        g = (1 - p.eta) * self.gamma_bar + p.eta * a
        self.gamma_bar = min(Fraction(p.gamma_max), max(Fraction(p.gamma_min), g))
        self.gamma = max(1, math.ceil(self.gamma_bar))

    def _on_params(self) -> None:
        # New bounds act at once on the planned window, not one step late.
        p = self.params
        self.gamma_bar = min(Fraction(p.gamma_max), max(Fraction(p.gamma_min), self.gamma_bar))
        self.gamma = max(1, math.ceil(self.gamma_bar))


class GammaTunePlus(GammaTune):
    """GammaTune plus early stop after a drafted token whose top-1 probability < τ (§4.2)."""

    name = "gammatune+"
    may_stop_early = True
    uses = ("eta", "delta", "tau", "gamma_min", "gamma_max")

    def keep_drafting(self, top_prob: float, chosen_prob: float) -> bool:
        return top_prob >= self.params.tau


class AdaptiveK(Policy):
    """vLLM's Adaptive K: the window with the most expected tokens per second (engine/goodput.py).

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

    def update(self, accepted: int, drafted: int) -> None:
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

    def describe(self) -> dict[str, Any]:
        p = self.params
        return {**super().describe(), "ema_alpha": float(p.ema_alpha), "alpha_prior": float(p.alpha_prior),
                "cooldown": p.cooldown}


class CostAware(Policy):
    """Drafts while one more token is worth its time (engine/costaware.py); may not draft at all (γ = 0).

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

    def keep_drafting(self, top_prob: float, chosen_prob: float) -> bool:
        return self.state.keep(chosen_prob)

    def observe_costs(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        self.state.observe_costs(draft_s, drafted, verify_s, verified)

    def update(self, accepted: int, drafted: int) -> None:
        _check_update(accepted, drafted)
        self.state.update(accepted, drafted)
        self.gamma = self.state.plan(self.params.gamma_min, self.params.gamma_max)

    def _on_params(self) -> None:
        # the learned table carries over; its weight, forgetting and the bounds act from now on
        cal = self.state.calibration
        cal.weight, cal.forget = float(self.params.calib_weight), float(self.params.calib_forget)
        self.state.gamma_max = self.params.gamma_max
        if self.gamma:
            self.gamma = _clip(self.gamma, self.params)

    def describe(self) -> dict[str, Any]:
        p = self.params
        return {**super().describe(), "calib_weight": float(p.calib_weight), "calib_forget": float(p.calib_forget)}


_CLASSES: dict[str, type[Policy]] = {
    cls.name: cls for cls in (SpecDecode, HFHeuristic, AssistantThreshold, GammaTune, GammaTunePlus, AdaptiveK,
                              CostAware)
}
assert tuple(_CLASSES) == METHODS, "engine/policy_params.py METHODS lists every policy class, in order"


def used_params(method: str) -> tuple[str, ...]:
    """The parameters `method` reads besides γ0 (specdecode and hf-heuristic: none)."""
    return _CLASSES[check_method(method)].uses


def make_policy(name: str, gamma0: int, **params: Any) -> Policy:
    """Build a policy by its CLI name; raises ValueError (InvalidParameter) on bad input."""
    cls = _CLASSES[check_method(name)]
    gamma0 = _check_gamma0(gamma0)
    return cls(gamma0, _fit_bounds(gamma0, PolicyParams.build(**params), params))


@dataclass(frozen=True)
class PolicySettings:
    """Everything that defines a policy, frozen so the UI can swap it in one assignment.

    The live session applies a new settings object at the next step boundary:
    same method → `set_params` (the learned state carries over); another
    method or γ0 → a fresh policy.
    """

    method: str = "gammatune+"
    gamma0: int = DEFAULT_GAMMA0
    params: PolicyParams = field(default_factory=PolicyParams)

    @classmethod
    def build(cls, method: str = "gammatune+", gamma0: int = DEFAULT_GAMMA0, **params: Any) -> "PolicySettings":
        g = _check_gamma0(gamma0)
        return cls(check_method(method), g, _fit_bounds(g, PolicyParams.build(**params), params))

    def with_changes(self, **changes: Any) -> "PolicySettings":
        method = check_method(changes.pop("method", self.method))
        gamma0 = _check_gamma0(changes.pop("gamma0", self.gamma0))
        params = PolicyParams.build(self.params, **changes)
        if gamma0 != self.gamma0:  # a new γ0 carries the bounds not changed with it
            params = _fit_bounds(gamma0, params, changes)
        return PolicySettings(method, gamma0, params)

    def make(self) -> Policy:
        return _CLASSES[self.method](self.gamma0, self.params)

    def apply_to(self, policy: Policy | None) -> Policy:
        """The policy to use from now on: `policy` updated in place if it can be, else a new one."""
        if policy is not None and policy.name == self.method and policy.gamma0 == self.gamma0:
            if policy.params != self.params:
                policy.params = self.params
                policy._on_params()
            return policy
        return self.make()
