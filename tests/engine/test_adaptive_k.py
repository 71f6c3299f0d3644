"""adaptive-k (after vLLM's Adaptive K) against hand-worked steps, plus property tests."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gammatune_tui.engine.policies.goodput import (
    FALLBACK_C_DRAFT, FOLD_STEPS, CostEstimate, PositionAcceptance, best_window, expected_tokens,
)
from gammatune_tui.engine.policies import METHODS, PolicyParams, PolicySettings, make_policy


def e(alphas):
    """E(K) written out: 1 + α1 + α1·α2 + …"""
    total, prod = 1.0, 1.0
    for a in alphas:
        prod *= a
        total += prod
    return total


def test_it_is_a_method():
    assert "adaptive-k" in METHODS
    p = make_policy("adaptive-k", 3)
    assert p.name == "adaptive-k" and p.gamma == 3 and p.may_stop_early is False
    assert p.keep_drafting(0.0, 0.0, 0.0)  # never stops a window early


def test_expected_tokens_hand_worked():
    assert expected_tokens([0.5, 0.5], 0.85, 3) == pytest.approx([1.0, 1.5, 1.75, 1.75 + 0.25 * 0.85])
    assert expected_tokens([], 1.0, 4) == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_cost_estimate_means_and_verify_line():
    c = CostEstimate()
    assert c.step_costs(range(1, 4)) is None  # nothing seen yet
    c.observe(0.02, 2, 0.05, 3)
    c.observe(0.0, 0, 0.04, 1)  # a step that drafted nothing tells the verify cost only
    assert c.draft_token_s() == pytest.approx(0.01)
    b, s = c.verify_line()  # through (1, 0.04) and (3, 0.05): slope 0.005, 0.035 at k = 0
    assert s == pytest.approx(0.005) and b == pytest.approx(0.035)
    assert c.step_costs(range(2, 4)) == pytest.approx({2: 0.02 + 0.05, 3: 0.03 + 0.055})
    flat = CostEstimate()
    flat.observe(0.03, 3, 0.04, 4)  # a longer pass measured faster would mean a negative slope: clamped to flat
    flat.observe(0.01, 1, 0.05, 2)
    flat.observe(0.01, 1, 0.05, 2)
    assert flat.verify_line() == pytest.approx((0.14 / 3, 0.0))
    with pytest.raises(ValueError, match="draft_s"):
        c.observe(-1.0, 1, 0.1, 2)
    with pytest.raises(ValueError, match="verify_s"):
        c.observe(0.1, 1, math.nan, 2)


def test_position_acceptance_folds_every_ten_steps():
    pa = PositionAcceptance()
    for _ in range(FOLD_STEPS - 1):
        pa.add(accepted=1, drafted=4)  # position 1 accepted, 2 rejected, 3 and 4 not reached
        assert not pa.fold_due()
    pa.add(accepted=4, drafted=4)
    assert pa.fold_due()
    assert pa.reached == [10, 10, 1, 1] and pa.accepted == [10, 1, 1, 1]
    pa.fold(0.3, 0.85)
    # rates 10/10, 1/10, 1/1, 1/1 folded into the prior 0.85 with weight 0.3; position 5 never reached
    assert pa.alphas == pytest.approx([0.895, 0.7 * 0.85 + 0.3 * 0.1, 0.895, 0.895])
    assert pa.steps == 0 and pa.reached == []
    assert expected_tokens(pa.alphas, 0.85, 5)[5] == pytest.approx(e(pa.alphas + [0.85]))


def test_first_plan_uses_observed_costs_and_the_prior():
    p = make_policy("adaptive-k", 2, gamma_min=1, gamma_max=16)
    p.observe_costs(draft_s=0.02, drafted=2, verify_s=0.05, verified=3)
    p.update(accepted=2, drafted=2)
    # t_draft = 0.01, flat verify 0.05, every α = prior 0.85: E(K)/(0.01·K + 0.05)
    rates = {k: e([0.85] * k) / (0.01 * k + 0.05) for k in range(1, 17)}
    assert max(rates, key=rates.get) == 5  # 41.21 at K = 4, 41.52 at 5, 41.18 at 6
    assert p.gamma == 5


def test_cooldown_holds_a_new_window_then_the_fold_moves_it():
    p = make_policy("adaptive-k", 2, gamma_min=1, cooldown=2)
    costs = dict(draft_s=0.02, drafted=2, verify_s=0.05, verified=3)
    p.observe_costs(**costs)
    p.update(accepted=0, drafted=2)  # step 1: plans 5, cooldown 2
    gammas = []
    for _ in range(FOLD_STEPS - 1):  # steps 2..10: every first draft rejected
        p.observe_costs(**costs)
        p.update(accepted=0, drafted=5)
        gammas.append(p.gamma)
    # before the fold at step 10 the estimates are still the prior: 5 stays the best window
    assert gammas[:-1] == [5] * (FOLD_STEPS - 2)
    # the fold: position 1 reached 10 times, accepted 0 → α1 = 0.7·0.85 = 0.595; the rest stay 0.85
    assert p.acceptance.alphas == pytest.approx([0.595])
    rates = {k: e([0.595] + [0.85] * (k - 1)) / (0.01 * k + 0.05) for k in range(1, 17)}
    assert max(rates, key=rates.get) == 4
    assert gammas[-1] == 4


def test_no_costs_yet_falls_back_to_vllms_default_ratio():
    p = make_policy("adaptive-k", 7, gamma_min=1, gamma_max=24)
    p.update(accepted=7, drafted=7)  # a decoder that reports no costs
    rates = {k: e([0.85] * k) / (1 + k * FALLBACK_C_DRAFT) for k in range(1, 25)}
    assert p.gamma == max(rates, key=rates.get)


def test_bounds_and_expensive_drafts():
    # drafting as dear as a target pass: the smallest window allowed wins
    p = make_policy("adaptive-k", 8, gamma_min=2, gamma_max=6)
    p.observe_costs(0.5, 5, 0.1, 6)
    p.update(accepted=1, drafted=5)
    assert p.gamma == 2
    # free drafts and perfect acceptance: the largest
    q = make_policy("adaptive-k", 1, gamma_min=2, gamma_max=6, alpha_prior=1)
    q.observe_costs(0.0, 1, 0.1, 2)
    q.update(accepted=1, drafted=1)
    assert q.gamma == 6
    q.set_params(gamma_max=4)  # new bounds act at once
    assert q.gamma == 4


def test_parameters_validate_and_record():
    for params, name in ((dict(ema_alpha=0), "ema_alpha"), (dict(ema_alpha=1.5), "ema_alpha"),
                         (dict(alpha_prior=-0.1), "alpha_prior"), (dict(alpha_prior=2), "alpha_prior"),
                         (dict(cooldown=-1), "cooldown"), (dict(cooldown=0.5), "cooldown"),
                         (dict(ema_alpha=math.inf), "ema_alpha")):
        with pytest.raises(ValueError, match=name):
            make_policy("adaptive-k", 4, **params)
        p = make_policy("adaptive-k", 4)
        with pytest.raises(ValueError, match=name):
            p.set_params(**params)
    p = make_policy("adaptive-k", 4)
    assert p.describe()["ema_alpha"] == 0.3 and p.describe()["alpha_prior"] == 0.85 and p.describe()["cooldown"] == 2
    # the other methods' recorded parameters are unchanged unless adaptive-k's are set
    assert "ema_alpha" not in make_policy("gammatune", 4).describe()
    tuned = PolicySettings.build("gammatune", 4, cooldown=5).params.to_json()
    assert tuned["cooldown"] == 5 and "ema_alpha" not in tuned
    assert PolicyParams.build(**{k: v for k, v in tuned.items()}) == PolicySettings.build("gammatune", 4, cooldown=5).params


def test_learned_estimates_survive_a_parameter_change():
    p = make_policy("adaptive-k", 4, gamma_min=1)
    for _ in range(FOLD_STEPS):
        p.observe_costs(0.04, 4, 0.05, 5)
        p.update(accepted=4, drafted=4)
    alphas = list(p.acceptance.alphas)
    s = PolicySettings.build("adaptive-k", 4, gamma_min=1)
    same = s.with_changes(alpha_prior=0.5).apply_to(p)
    assert same is p and p.acceptance.alphas == alphas and p.costs.drafted == 4 * FOLD_STEPS


cost_st = st.tuples(st.floats(0, 0.05), st.floats(0.001, 0.2), st.floats(0, 0.02))


@settings(max_examples=80, deadline=None)
@given(gamma0=st.integers(1, 24), bounds=st.tuples(st.integers(1, 8), st.integers(0, 16)),
       ema=st.sampled_from([0.05, 0.3, 0.5, 1.0]), prior=st.sampled_from([0.0, 0.4, 0.85, 1.0]),
       cooldown=st.integers(0, 4), steps=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), cost_st),
                                                  max_size=40))
def test_adaptive_k_invariants(gamma0, bounds, ema, prior, cooldown, steps):
    gmin, extra = bounds
    kw = dict(gamma_min=gmin, gamma_max=gmin + extra, ema_alpha=ema, alpha_prior=prior, cooldown=cooldown)
    a, b = make_policy("adaptive-k", gamma0, **kw), make_policy("adaptive-k", gamma0, **kw)
    gammas_a, gammas_b = [], []
    changes_at = []
    for i, (acc, d, (t_draft, t_verify, slope)) in enumerate(steps):
        d = min(d, a.gamma)
        acc = min(acc, d)
        for p in (a, b):
            p.observe_costs(t_draft * d, d, t_verify + slope * d, d + 1)
        before = a.gamma
        a.update(accepted=acc, drafted=d)
        b.update(accepted=acc, drafted=d)
        gammas_a.append(a.gamma)
        gammas_b.append(b.gamma)
        assert isinstance(a.gamma, int) and gmin <= a.gamma <= gmin + extra
        if a.gamma != before:
            changes_at.append(i)
    assert gammas_a == gammas_b  # deterministic
    # after a change of window the next `cooldown` updates keep it (the first re-plan is the exception:
    # γ0 may lie outside the bounds, and that plan starts the first cooldown)
    for x, y in zip(changes_at, changes_at[1:]):
        assert y - x > cooldown
