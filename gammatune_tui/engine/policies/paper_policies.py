"""The paper's five γ policies (docs/spec.md §2.2): specdecode, hf-heuristic, assistant-threshold, gammatune, gammatune+.

Pure Python and deterministic, so the trace simulator can replay a policy
exactly, the TUI can swap one between two steps, and the tests can check them
against hand-worked traces. γ̄ is kept as an exact rational (`Fraction`): η is
read as the decimal the user typed, so a γ̄ that is 12 in real arithmetic
gives γ = 12, never 13 through floating-point drift. Listed in the method
registry of engine/policies/__init__.py.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

from .confidence import roc_threshold
from .policy_base import Policy, TokenStats, check_update as _check_update, clip as _clip
from .policy_params import PolicyParams


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

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
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

    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return chosen_prob >= self.tau

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        _check_update(accepted, drafted)
        if not self.params.dynamic_tau:
            return
        probs = [t.chosen for t in window[:drafted]]
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
    uses: tuple[str, ...] = ("eta", "delta", "gamma_min", "gamma_max")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.gamma_bar = Fraction(self.gamma)

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
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

    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return top_prob >= self.params.tau
