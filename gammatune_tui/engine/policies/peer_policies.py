"""The peers' γ policies of docs/spec.md §2.6: p-min, adaedl, svip, ema-tiers, ucb.

gammatune exists to answer "which γ policy?", so the rules other projects
ship are played here beside the paper's, each as its source publishes it
(docs/policies.md cites the sources and every place where the house's
conventions differ). Like the others they are pure Python and deterministic,
so the trace simulator replays them step for step. They follow the house:
a window is planned within [γ_min, γ_max]; the token whose statistics end a
window stays in the draft.

State that is compared against a threshold on a boundary (adaedl's λ,
ema-tiers' EMA) is kept as an exact rational, as GammaTune's γ̄ is, so a
hand-worked case that lands exactly on a threshold gives the same answer on
every machine; statistics that only feed a mean (adaedl's acceptance rate,
ucb's rewards) are floats.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

from ...errors import TraceWithoutEntropy
from .policy_base import Policy, TokenStats, check_update as _check_update, clip as _clip

if TYPE_CHECKING:
    from .policy_params import PolicyParams

# --- the sources' constants (docs/spec.md §2.6; docs/policies.md "The peers") -------------------------
EDL_SCALE = 0.2  # AdaEDL's entropy scale s (the paper's γ): bound = 1 − √(s·H)
EDL_STEP = Fraction(1, 100)  # λ' = λ ± 0.01
EDL_MIX = Fraction(9, 10)  # λ ← 0.9·λ + 0.1·λ'
SVIP_SCALE = 0.15  # SVIP stops once √(0.15·H) > h
TIER_BASE = (1, 3, 7)  # SGLang's default candidate_steps
TIER_EMA = Fraction(4, 5)  # ema ← 0.8·ema + 0.2·A (ema_alpha 0.2)
TIER_WARMUP = 10  # warmup_batches
TIER_INTERVAL = 5  # update_interval
TIER_DOWN = Fraction(3, 4)  # move down while ema ≤ cand[i−1] − 0.5 + down_hysteresis (−0.25)
TIER_UP = Fraction(1, 2)  # move up while ema > cand[i] − 0.5 (+ up_hysteresis 0)
UCB_EXPLORE = 6.0  # BanditSpec's exploration weight: mean + √(6·ln t / n)

def _known(entropy: float) -> float:
    """H in nats, never below 0 (rounding); a NaN (a trace recorded before entropy was kept) is refused:
    playing it as any number would print a rule's results for a rule that never ran."""
    if math.isnan(entropy):
        raise TraceWithoutEntropy("adaedl and svip read the draft's entropy, which these traces were recorded "
                                  "without: record them again (bench --refresh-traces, or a new --traces file)")
    return max(0.0, entropy)


def edl_bound(entropy: float) -> float:
    """AdaEDL's lower bound on the chance a token is accepted: 1 − √(s·H), H in nats."""
    return 1.0 - math.sqrt(EDL_SCALE * _known(entropy))


def svip_score(entropy: float) -> float:
    """SVIP's stop score √(0.15·H), H in nats: drafting stops once it exceeds h."""
    return math.sqrt(SVIP_SCALE * _known(entropy))


class PMin(Policy):
    """llama.cpp's `--draft-p-min`: a fixed window that ends after a token whose top-1 probability < p_min."""

    name = "p-min"
    may_stop_early = True
    uses = ("p_min",)

    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return top_prob >= self.params.p_min


class AdaEDL(Policy):
    """AdaEDL (arXiv 2410.18351, Alg. 1): stop after a token whose entropy bound 1 − √(0.2·H) < λ.

    γ0 is the cap. λ starts at λ0 (`edl_lambda`) and moves by 0.001 a step:
    up while the smoothed acceptance rate AR is below α* (`edl_target`),
    down when AR has reached it but the window was not fully accepted.
    """

    name = "adaedl"
    may_stop_early = True
    uses = ("edl_lambda", "edl_target")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self._lambda0 = Fraction(params.edl_lambda)
        self.lam = self._lambda0
        self.ar: float | None = None  # no step drafted yet

    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return edl_bound(entropy) >= self.lam

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        _check_update(accepted, drafted)
        if drafted <= 0:
            return
        rate = accepted / drafted
        self.ar = rate if self.ar is None else 0.5 * self.ar + 0.5 * rate
        if self.ar < self.params.edl_target:
            nxt = self.lam + EDL_STEP
        elif accepted != self.gamma:
            nxt = self.lam - EDL_STEP
        else:
            nxt = self.lam
        self.lam = EDL_MIX * self.lam + (1 - EDL_MIX) * nxt

    def _on_params(self) -> None:
        # a new λ0 starts λ again from it (as a new τ does for assistant-threshold); AR carries over
        lambda0 = Fraction(self.params.edl_lambda)
        if lambda0 != self._lambda0:
            self.lam = lambda0
        self._lambda0 = lambda0

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "edl_lambda_now": float(self.lam)}


class SVIP(Policy):
    """SVIP (arXiv 2411.18462, the authors' code): γ0 is the cap; stop after a token with √(0.15·H) > h."""

    name = "svip"
    may_stop_early = True
    uses = ("svip_h",)

    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return svip_score(entropy) <= self.params.svip_h


def tier_candidates(gamma0: int, gamma_min: int, gamma_max: int) -> list[int]:
    """SGLang's candidate windows {1, 3, 7} ∪ {γ0}, each clipped into [γ_min, γ_max], sorted."""
    return sorted({min(gamma_max, max(gamma_min, g)) for g in (*TIER_BASE, gamma0)})


class EmaTiers(Policy):
    """SGLang's `--speculative-adaptive` (PR #21599): an EMA of A moves γ between candidate tiers.

    The EMA (weight 0.2) starts at γ0 − 1 and is fed every step; after ten
    warm-up steps, every fifth step the tier moves down while the EMA is at
    most the lower tier − 0.75, then up while it exceeds the tier − 0.5.
    Never stops a window early.
    """

    name = "ema-tiers"
    uses = ("gamma_min", "gamma_max")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.candidates = tier_candidates(self.gamma0, params.gamma_min, params.gamma_max)
        self.ema = Fraction(self.gamma - 1)
        self.count = 0

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        _check_update(accepted, drafted)
        self.ema = TIER_EMA * self.ema + (1 - TIER_EMA) * accepted
        self.count += 1
        if self.count <= TIER_WARMUP or (self.count - TIER_WARMUP) % TIER_INTERVAL:
            return
        cand = self.candidates
        i = cand.index(self.gamma)
        while i > 0 and self.ema <= cand[i - 1] - TIER_DOWN:
            i -= 1
        while i < len(cand) - 1 and self.ema > cand[i] - TIER_UP:
            i += 1
        self.gamma = cand[i]

    def _on_params(self) -> None:
        # new bounds give new tiers at once; γ moves to the tier nearest it (the lower one on a tie)
        p = self.params
        self.candidates = tier_candidates(self.gamma0, p.gamma_min, p.gamma_max)
        g = _clip(self.gamma, p)
        self.gamma = min(self.candidates, key=lambda c: (abs(c - g), c))


class UCB(Policy):
    """BanditSpec's UCBSpec (arXiv 2505.15141): every γ in [γ_min, γ_max] is an arm of a bandit.

    The first 2·|arms| steps play the arms round-robin from the smallest;
    then the arm with the highest mean_k + √(6·ln t / n_k) (t steps so far,
    n_k plays of arm k; ties to the smaller γ). A step's reward is the tokens
    it emitted per second, (A + 1) / (draft_s + verify_s), from the costs
    the decoder (or the simulator's cost model) reports before the update.
    Never stops a window early; γ0 is not read (the bandit starts at γ_min).
    """

    name = "ucb"
    uses = ("gamma_min", "gamma_max")

    def __init__(self, gamma0: int, params: PolicyParams):
        super().__init__(gamma0, params)
        self.plays: dict[int, int] = {}
        self.means: dict[int, float] = {}
        self.steps = 0
        self._step_s: float | None = None
        self.gamma = self._choose()

    def arms(self) -> range:
        return range(self.params.gamma_min, self.params.gamma_max + 1)

    def observe_costs(self, draft_s: float, drafted: int, verify_s: float, verified: int) -> None:
        self._step_s = draft_s + verify_s

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        _check_update(accepted, drafted)
        seconds, self._step_s = self._step_s, None
        # without a reported cost (a bare test, a source that times nothing) a step counts as one unit of time
        reward = (accepted + 1) / seconds if seconds and seconds > 0 else float(accepted + 1)
        arm = self.gamma
        n = self.plays.get(arm, 0)
        self.means[arm] = (self.means.get(arm, 0.0) * n + reward) / (n + 1)
        self.plays[arm] = n + 1
        self.steps += 1
        self.gamma = self._choose()

    def _choose(self) -> int:
        arms = self.arms()
        if self.steps < 2 * len(arms):
            return arms[self.steps % len(arms)]
        unplayed = [g for g in arms if not self.plays.get(g)]
        if unplayed:  # an arm the bounds added after the warm-up: its bonus is infinite
            return unplayed[0]
        log_t = math.log(self.steps)
        best, best_score = arms[0], -math.inf
        for g in arms:
            score = self.means[g] + math.sqrt(UCB_EXPLORE * log_t / self.plays[g])
            if score > best_score:  # strictly greater: a tie keeps the smaller γ
                best, best_score = g, score
        return best

    def _on_params(self) -> None:
        # new bounds give new arms from the next choice on; what was learned about each γ carries over
        self.gamma = _clip(self.gamma, self.params)
