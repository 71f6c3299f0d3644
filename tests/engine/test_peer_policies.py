"""The peers' γ policies (docs/spec.md §2.6) against hand-worked cases, one rule at a time."""

from __future__ import annotations

import math
from fractions import Fraction
import pytest

from gammatune_tui.engine.policies.peer_policies import edl_bound, svip_score
from gammatune_tui.engine.policies import make_policy


def peer(name, gamma0, **params):
    """A peer policy through the public API, with the house's default bounds [1, 8] unless given."""
    return make_policy(name, gamma0, **params)


def feed(policy, steps, seconds=None):
    """(accepted, drafted) pairs; each step's cost first when `seconds` is given; γ after each update."""
    out = []
    for a, d in steps:
        if seconds is not None:
            policy.observe_costs(seconds / 4, d, seconds * 3 / 4, d + 1)
        policy.update(accepted=a, drafted=d)
        out.append(policy.gamma)
    return out


# -- p-min ---------------------------------------------------------------------------------

def test_p_min_stops_after_a_top_probability_below_p_min_and_keeps_its_window():
    p = peer("p-min", 5)
    assert p.gamma == 5 and p.may_stop_early
    assert p.keep_drafting(0.75, 0.01, 0.0)  # the default 0.75 itself keeps drafting; chosen is not read
    assert not p.keep_drafting(0.7499, 0.7499, 0.0)
    assert feed(p, [(0, 1), (5, 5), (2, 3)]) == [5, 5, 5]  # learns nothing
    strict = peer("p-min", 3, p_min=0.9)
    assert not strict.keep_drafting(0.89, 0.89, 0.0) and strict.keep_drafting(0.9, 0.2, 5.0)


# -- AdaEDL --------------------------------------------------------------------------------

def test_adaedl_bound_is_one_minus_root_of_a_fifth_of_the_entropy():
    assert edl_bound(1.25) == 0.5  # √(0.2 · 1.25) = 0.5
    assert edl_bound(0.0) == 1.0 and edl_bound(-1e-9) == 1.0  # a point mass (prompt lookup) never stops
    p = peer("adaedl", 4, edl_lambda=0.5)
    assert p.keep_drafting(0.1, 0.1, entropy=1.25)  # bound 0.5 is not below λ 0.5
    assert not p.keep_drafting(0.99, 0.99, entropy=1.3)
    assert not peer("adaedl", 4, edl_lambda=0.6).keep_drafting(0.9, 0.9, entropy=1.25)


def test_adaedl_lambda_and_acceptance_rate_follow_algorithm_one():
    p = peer("adaedl", 4, edl_lambda=0.5, edl_target=0.9)
    steps = [
        ((0, 0), None, Fraction(1, 2)),         # nothing drafted: no update, AR not started
        ((4, 4), 1.0, Fraction(1, 2)),          # AR starts at A/d = 1 ≥ α*, A = γ0: λ stays
        ((1, 4), 0.625, Fraction(501, 1000)),   # AR = .5 + .125 < .9: λ' = λ + .01, λ = .9λ + .1λ'
        ((4, 4), 0.8125, Fraction(502, 1000)),  # still below α*: up again
        ((4, 4), 0.90625, Fraction(502, 1000)),  # AR ≥ α* and the full window: unchanged
        ((3, 3), 0.953125, Fraction(501, 1000)),  # AR ≥ α* but A ≠ γ0 (an early stop): down
    ]
    for (a, d), ar, lam in steps:
        p.update(accepted=a, drafted=d)
        assert p.ar == ar and p.lam == lam
        assert p.gamma == 4  # γ0 is the cap, always planned
    assert float(p.lam) == 0.501 and p.describe()["edl_lambda_now"] == 0.501


def test_adaedl_first_drafted_step_sets_the_rate_even_when_nothing_was_accepted():
    p = peer("adaedl", 6, edl_lambda=0.4, edl_target=0.9)
    p.update(accepted=0, drafted=2)
    assert p.ar == 0.0 and p.lam == Fraction(401, 1000)


# -- SVIP ----------------------------------------------------------------------------------

def test_svip_stops_once_the_entropy_exceeds_h_squared_over_0_15():
    p = peer("svip", 6)  # h = 0.3: stop once H > 0.6 nats
    assert p.gamma == 6 and p.may_stop_early
    assert p.keep_drafting(0.01, 0.01, entropy=0.5)  # probabilities are not read
    assert not p.keep_drafting(0.99, 0.99, entropy=0.7)
    assert p.keep_drafting(0.5, 0.5, entropy=0.0)
    assert svip_score(0.6) == pytest.approx(0.3)
    wide = peer("svip", 6, svip_h=0.6)  # H > 2.4
    assert wide.keep_drafting(0.5, 0.5, entropy=2.3) and not wide.keep_drafting(0.5, 0.5, entropy=2.5)
    assert feed(p, [(0, 3), (6, 6)]) == [6, 6]


# -- ema-tiers -----------------------------------------------------------------------------

def test_ema_tiers_candidates_are_1_3_7_and_gamma0_within_the_bounds():
    assert peer("ema-tiers", 4).candidates == [1, 3, 4, 7]
    assert peer("ema-tiers", 3).candidates == [1, 3, 7]
    assert peer("ema-tiers", 4, gamma_min=2, gamma_max=5).candidates == [2, 3, 4, 5]
    p = peer("ema-tiers", 4)
    assert p.gamma == 4 and p.ema == 3 and not p.may_stop_early


def test_ema_tiers_moves_only_at_counts_15_20_and_so_on():
    p = peer("ema-tiers", 4)
    # fourteen empty windows: the EMA falls from 3 towards 0, but γ holds through the warm-up and the interval
    assert feed(p, [(0, 4)] * 14) == [4] * 14
    assert p.ema == 3 * Fraction(4, 5) ** 14
    # count 15: EMA 0.106 ≤ 3 − 0.75 and ≤ 1 − 0.75: two tiers down, to 1
    assert feed(p, [(0, 4)]) == [1]
    # counts 16–19 hold; at 20 the EMA (0.707) > 1 − 0.5 but not > 3 − 0.5: one tier up
    assert feed(p, [(1, 1)] * 4) == [1] * 4
    assert feed(p, [(1, 1)]) == [3]
    assert float(p.ema) == pytest.approx(3 * 0.8 ** 20 + (1 - 0.8 ** 5))
    # full windows of 3: at count 25 the EMA is 2.249, not yet > 3 − 0.5; at 30 it is 2.753: up to 4
    # (and not past 4 − 0.5, so not on to 7)
    assert feed(p, [(3, 3)] * 10) == [3] * 9 + [4]


def test_ema_tiers_thresholds_are_inclusive_down_and_strict_up():
    p = peer("ema-tiers", 7)  # tiers [1, 3, 7]
    p.count, p.ema = 14, Fraction(37, 16)
    p.update(accepted=2, drafted=7)  # ema = 0.8 · 37/16 + 0.4 = 9/4 = 3 − 0.75 exactly
    assert p.ema == Fraction(9, 4) and p.gamma == 3
    q = peer("ema-tiers", 3)
    q.count, q.ema = 14, Fraction(25, 8)
    q.update(accepted=0, drafted=3)  # ema = 5/2 = 3 − 0.5 exactly: not above it, so no move up
    assert q.ema == Fraction(5, 2) and q.gamma == 3


# -- ucb -----------------------------------------------------------------------------------

def test_ucb_plays_each_arm_twice_round_robin_from_the_smallest():
    p = peer("ucb", 5, gamma_min=1, gamma_max=3)  # γ0 is not read: the bandit starts at γ_min
    assert p.gamma == 1 and not p.may_stop_early
    assert feed(p, [(1, 1), (2, 2), (3, 3), (1, 1), (0, 2)], seconds=1.0) == [2, 3, 1, 2, 3]


def test_ucb_then_picks_the_best_upper_bound_ties_to_the_smaller_gamma():
    p = peer("ucb", 4, gamma_min=1, gamma_max=3)
    # rewards (A + 1) per second at 1 s a step: arm 1 → 2, 2; arm 2 → 3, 1; arm 3 → 4, 2
    assert feed(p, [(1, 1), (2, 2), (3, 3), (1, 1), (0, 2), (1, 3)], seconds=1.0)[-1] == 3
    assert p.means == {1: 2.0, 2: 2.0, 3: 3.0} and p.plays == {1: 2, 2: 2, 3: 2}
    # t = 7: arms 1 and 2 score 2 + √(6 ln 7 / 2) = 4.416; arm 3 after a reward of 1 scores
    # 7/3 + √(6 ln 7 / 3) = 4.306: the bonus of the less played arms wins, the tie goes to γ = 1
    assert feed(p, [(0, 3)], seconds=1.0) == [1]
    assert 2 + math.sqrt(6 * math.log(7) / 2) > 7 / 3 + math.sqrt(6 * math.log(7) / 3)
    even = peer("ucb", 4, gamma_min=1, gamma_max=2)
    assert feed(even, [(1, 1), (0, 2), (1, 1), (0, 2)], seconds=1.0) == [2, 1, 2, 1]  # equal means: the smaller


def test_ucb_reward_is_tokens_per_second_of_the_step():
    p = peer("ucb", 4, gamma_min=1, gamma_max=2)
    feed(p, [(1, 1)], seconds=0.4)  # 2 tokens in 0.4 s
    feed(p, [(2, 2)], seconds=1.0)  # 3 tokens in 1 s
    assert p.means == {1: pytest.approx(5.0), 2: pytest.approx(3.0)}
