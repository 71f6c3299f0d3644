"""The five γ policies against hand-worked traces, plus property tests (docs/spec.md §2)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gammatune_tui.engine.policies import METHODS, PAPER_DEFAULTS, PolicySettings, make_policy, roc_threshold
from gammatune_tui.engine.policies.policy_base import TokenStats


def trace(policy, steps):
    """Feed (accepted, drafted) pairs; return γ after each update."""
    out = []
    for a, d in steps:
        policy.update(accepted=a, drafted=d)
        out.append(policy.gamma)
    return out


def _window(*probs):
    """A drafted window's statistics, each token's top = chosen probability (greedy), entropy unknown."""
    return [TokenStats(p, p, float("nan")) for p in probs]


def test_specdecode_is_fixed():
    p = make_policy("specdecode", 5)
    assert p.gamma == 5
    assert trace(p, [(5, 5), (0, 5), (2, 5)]) == [5, 5, 5]
    assert p.keep_drafting(0.0, 0.0, 0.0)


def test_hf_heuristic_trace():
    p = make_policy("hf-heuristic", 4, gamma_min=1, gamma_max=24)
    # full window: +2; otherwise −1, floor 1 (transformers' schedule, bounds opened wide)
    assert trace(p, [(4, 4), (2, 6), (0, 5), (0, 4), (0, 3), (0, 2), (0, 1), (1, 1)]) == [6, 5, 4, 3, 2, 1, 1, 3]
    assert p.keep_drafting(0.01, 0.01, 0.0)


def test_assistant_threshold_stops_on_chosen_probability():
    p = make_policy("assistant-threshold", 6, tau=0.4)
    assert p.keep_drafting(top_prob=0.9, chosen_prob=0.5, entropy=0.0)
    assert not p.keep_drafting(top_prob=0.9, chosen_prob=0.39, entropy=0.0)
    assert p.keep_drafting(top_prob=0.1, chosen_prob=0.4, entropy=0.0)  # τ itself keeps drafting
    assert trace(p, [(1, 3)]) == [6]


def test_assistant_threshold_dynamic_tau_follows_roc_rule():
    p = make_policy("assistant-threshold", 4, tau=0.4, dynamic_tau=True)
    # step 1: probs .9 .8 accepted, .3 rejected, .95 after the rejection is dropped
    p.update(accepted=2, drafted=4, window=_window(0.9, 0.8, 0.3, 0.95))
    assert p.tau == 0.4  # only 3 labelled samples so far
    p.update(accepted=1, drafted=2, window=_window(0.7, 0.2))
    # samples: (.9,1) (.8,1) (.3,0) (.7,1) (.2,0) = 5, not > 5: unchanged
    assert p.tau == 0.4
    p.update(accepted=0, drafted=1, window=_window(0.1))
    # 6 samples, perfectly separated at .7: fpr 0, tpr 1
    assert p.tau == pytest.approx(0.7)


def test_roc_threshold_hand_worked():
    assert roc_threshold([0.9, 0.8, 0.7, 0.3, 0.2, 0.1], [1, 1, 1, 0, 0, 0]) == pytest.approx(0.7)
    # overlap: cost = fpr + 3(1 − tpr); at .6: tp 2/3, fp 1/3 -> 1.33; at .2: tp 1, fp 2/3 -> .67; at .1 -> 1
    assert roc_threshold([0.9, 0.6, 0.5, 0.4, 0.2, 0.1], [1, 1, 0, 0, 1, 0]) == pytest.approx(0.2)


def test_gammatune_trace_eta_half():
    p = make_policy("gammatune", 4, eta=0.5, delta=1, gamma_min=1)
    # A=γ=4 -> A=5: γ̄ = 4.5 -> 5; A=2: γ̄ = 3.25 -> 4; A=γ=4 -> 5: γ̄ = 4.125 -> 5
    assert trace(p, [(4, 4), (2, 5), (4, 4)]) == [5, 4, 5]
    assert p.gamma_bar == Fraction(33, 8)


def test_gammatune_trace_eta_0_3():
    p = make_policy("gammatune", 4, eta=0.3, delta=1, gamma_min=1)
    # γ̄: 0.7·4 + 0.3·5 = 4.3 -> 5; 0.7·4.3 + 0.3·1 = 3.31 -> 4; 0.7·3.31 + 0.3·5 = 3.817 -> 4
    assert trace(p, [(4, 4), (1, 5), (4, 4)]) == [5, 4, 4]
    assert p.gamma_bar == Fraction("3.817")


@pytest.mark.parametrize(
    "eta, gamma0", [(0.2, 12), (0.1, 3), (0.3, 3), (0.3, 5), (0.1, 7), (0.7, 9)],
)
def test_gammatune_exact_ceiling(eta, gamma0):
    """γ̄ that is an integer in real arithmetic gives exactly that γ (no floating-point drift)."""
    p = make_policy("gammatune", gamma0, eta=eta, delta=0, gamma_min=1, gamma_max=24)
    p.update(accepted=gamma0, drafted=gamma0)  # A = γ, δ = 0: γ̄ stays γ0 mathematically
    assert p.gamma == gamma0
    assert p.gamma_bar == gamma0


def test_floating_point_would_drift_in_the_ceiling_case():
    """The naive float recurrence gets the η = 0.2 case wrong, so the test above can fail."""
    eta, g = 0.2, 12.0
    naive = (1 - eta) * g + eta * 12
    assert math.ceil(naive) == 13


def test_gammatune_bounds_and_early_stop():
    p = make_policy("gammatune", 4, eta=0.5, delta=2, gamma_min=2, gamma_max=6)
    assert trace(p, [(4, 4), (6, 6), (6, 6), (6, 6)])[-1] == 6
    assert trace(p, [(0, 6)] * 10)[-1] == 2
    plus = make_policy("gammatune+", 4, eta=0.5, delta=1, tau=0.4, gamma_min=1)
    assert plus.keep_drafting(top_prob=0.4, chosen_prob=0.01, entropy=0.0)
    assert not plus.keep_drafting(top_prob=0.39, chosen_prob=0.39, entropy=0.0)
    # an early stop drafted 2 < γ = 4; both accepted: A < γ, no expansion -> γ̄ = 3
    plus.update(accepted=2, drafted=2)
    assert plus.gamma == 3 and plus.gamma_bar == 3


def test_shipped_defaults_let_gamma_move():
    """The defaults (η 0.9, δ 1, γ in [1, 8]): a rejection pulls γ to 1, each full window pushes it up by one."""
    p = make_policy("gammatune", 4)
    assert trace(p, [(0, 4)] * 4) == [1, 1, 1, 1]  # γ̄ = 0.1·4 = 0.4 → clipped to γ_min 1
    # A = γ → A + δ: γ̄ = 0.1 + 1.8 = 1.9 → 2; 0.19 + 2.7 = 2.89 → 3; 0.289 + 3.6 = 3.889 → 4; 0.3889 + 4.5 → 5
    assert trace(p, [(1, 1), (2, 2), (3, 3), (4, 4)]) == [2, 3, 4, 5]
    assert trace(p, [(2, 5)]) == [3]  # one early rejection after two tokens: γ̄ = 0.48889 + 1.8 → 3
    assert trace(p, [(8, 8)] * 4)[-1] == 8  # held at γ_max
    paper = make_policy("gammatune", 4, **PAPER_DEFAULTS)  # --paper-defaults: the floor of 4 holds
    assert trace(paper, [(0, 4)] * 6)[-1] == 4


def test_shipped_gammatune_plus_stops_on_the_drafts_doubts():
    """τ = 0.3 by default: a token the draft gives under 30 % ends the window; one above it does not."""
    plus = make_policy("gammatune+", 4)
    assert not plus.keep_drafting(top_prob=0.2, chosen_prob=0.2, entropy=0.0)
    assert plus.keep_drafting(top_prob=0.31, chosen_prob=0.31, entropy=0.0)


def test_set_params_changes_in_place_and_clips():
    p = make_policy("gammatune", 8, eta=0.5)
    p.set_params(gamma_max=5)
    assert p.gamma == 5
    p.set_params(eta=0.25, delta=0, tau=0.5)
    assert p.params.eta == Fraction(1, 4) and p.params.delta == 0


@pytest.mark.parametrize(
    "params, name",
    [
        (dict(eta=0), "eta"), (dict(eta=1.5), "eta"), (dict(eta=-0.1), "eta"), (dict(delta=-1), "delta"),
        (dict(delta=0.5), "delta"), (dict(tau=-0.01), "tau"), (dict(tau=1.01), "tau"),
        (dict(gamma_min=0), "gamma_min"), (dict(gamma_max=0), "gamma_max"),
        (dict(gamma_min=5, gamma_max=4), "gamma_min"), (dict(bogus=1), "bogus"),
        (dict(eta=float("nan")), "eta"),
    ],
)
def test_invalid_parameters_name_the_parameter(params, name):
    with pytest.raises(ValueError, match=name):
        make_policy("gammatune+", 4, **params)
    p = make_policy("gammatune+", 4)
    with pytest.raises(ValueError, match=name):
        p.set_params(**params)


def test_invalid_gamma0_and_method():
    for g in (0, -1, 2.5):
        with pytest.raises(ValueError, match="gamma0"):
            make_policy("specdecode", g)
    with pytest.raises(ValueError, match="unknown method"):
        make_policy("gammatune++", 4)
    with pytest.raises(ValueError):
        make_policy("gammatune", 4).update(accepted=3, drafted=2)


def test_settings_apply_to_keeps_or_replaces():
    s = PolicySettings.build("gammatune", 4, eta=0.5, gamma_min=1)
    p = s.make()
    p.update(accepted=0, drafted=4)
    same = s.with_changes(eta=0.3).apply_to(p)
    assert same is p and p.gamma_bar == 2 and p.params.eta == Fraction(3, 10)
    other = s.with_changes(method="specdecode").apply_to(p)
    assert other is not p and other.name == "specdecode" and other.gamma == 4


steps_st = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=40)
eta_st = st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.9, 1.0])


@settings(max_examples=60, deadline=None)
@given(
    method=st.sampled_from(METHODS), gamma0=st.integers(1, 24), eta=eta_st, delta=st.integers(0, 4),
    bounds=st.tuples(st.integers(1, 8), st.integers(0, 16)), steps=steps_st,
)
def test_policy_invariants(method, gamma0, eta, delta, bounds, steps):
    gmin, extra = bounds
    kw = dict(eta=eta, delta=delta, gamma_min=gmin, gamma_max=gmin + extra)
    a, b = make_policy(method, gamma0, **kw), make_policy(method, gamma0, **kw)
    gammas_a, gammas_b = [], []
    exact = Fraction(min(gmin + extra, max(gmin, gamma0)))  # γ0 outside bounds set explicitly: clipped
    # ucb's round robin starts at the smallest arm, γ_min (docs/spec.md §2.6), whatever γ0 is
    assert a.gamma == (gmin if method == "ucb" else exact)
    for acc, d in steps:
        d = max(1, min(d, a.gamma)) if a.gamma else 0
        acc = min(acc, d)
        planned = a.gamma
        a.update(accepted=acc, drafted=d)
        b.update(accepted=acc, drafted=d)
        gammas_a.append(a.gamma)
        gammas_b.append(b.gamma)
        assert isinstance(a.gamma, int)
        # every policy plans within its bounds; costaware may also plan 0 (a plain target step)
        assert gmin <= a.gamma <= gmin + extra or (method == "costaware" and a.gamma == 0)
        if method in ("gammatune", "gammatune+"):
            x = Fraction(acc + (delta if acc == planned else 0))
            exact = min(Fraction(gmin + extra), max(Fraction(gmin), (1 - Fraction(str(eta))) * exact + Fraction(str(eta)) * x))
            assert a.gamma == math.ceil(exact)
        if method in ("specdecode", "assistant-threshold", "p-min", "adaedl", "svip"):
            assert a.gamma == min(gmin + extra, max(gmin, gamma0))
    assert gammas_a == gammas_b  # deterministic


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(["eta", "delta", "tau", "gamma_min", "gamma_max"]),
    value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 40)),
)
def test_set_params_validation_property(name, value):
    p = make_policy("gammatune+", 4)
    before = p.params
    valid = {
        "eta": lambda v: math.isfinite(v) and 0 < v <= 1,
        "delta": lambda v: math.isfinite(v) and v >= 0 and float(v).is_integer(),
        "tau": lambda v: math.isfinite(v) and 0 <= v <= 1,
        "gamma_min": lambda v: math.isfinite(v) and float(v).is_integer() and 1 <= v <= before.gamma_max,
        "gamma_max": lambda v: math.isfinite(v) and float(v).is_integer() and v >= max(1, before.gamma_min),
    }[name](value)
    if valid:
        p.set_params(**{name: value})
        assert p.gamma >= 1
    else:
        with pytest.raises(ValueError):
            p.set_params(**{name: value})
        assert p.params == before  # a rejected change leaves the policy untouched


@pytest.mark.parametrize("method", METHODS)
def test_asking_changes_nothing_the_policy_learns_in_its_update(method):
    """keep_drafting is a pure question: asked any number of times, the policy plans and answers the same."""
    asked, quiet = (make_policy(method, 4, dynamic_tau=True) for _ in range(2))
    steps = [((0.9, 0.8, 0.3), 2), ((0.7, 0.2), 1), ((0.1,), 0), ((0.95, 0.9, 0.99, 0.97), 4)] * 3
    for probs, a in steps:
        window = _window(*probs)
        answers = [asked.keep_drafting(t.top, t.chosen, 0.5, window[:i]) for i, t in enumerate(window)]
        assert answers == [asked.keep_drafting(t.top, t.chosen, 0.5, window[:i]) for i, t in enumerate(window)]
        for p in (asked, quiet):
            p.observe_costs(0.001 * len(probs), len(probs), 0.01, len(probs) + 1)
            p.update(accepted=a, drafted=len(probs), window=window)
        assert asked.gamma == quiet.gamma and asked.describe() == quiet.describe()


def test_dynamic_tau_survives_unrelated_parameter_changes():
    p = make_policy("assistant-threshold", 4, tau=0.4, dynamic_tau=True)
    for probs, a in (((0.9, 0.8, 0.3), 2), ((0.7, 0.2), 1), ((0.1,), 0)):
        p.update(accepted=a, drafted=len(probs), window=_window(*probs))
    assert p.tau == pytest.approx(0.7)
    p.set_params(eta=0.3)
    assert p.tau == pytest.approx(0.7)  # learned τ kept
    p.set_params(tau=0.5)
    assert p.tau == 0.5  # an explicit τ wins
    p.set_params(dynamic_tau=False)
    assert p.tau == 0.5


def test_bounds_follow_gamma0_unless_set():
    """Issue 17 row 9: γ0 = 1 runs at 1 and γ0 = 20 may stay at 20 under default bounds; set bounds clip γ0."""
    low = make_policy("gammatune", 1)
    assert low.gamma == 1 and low.params.gamma_min == 1
    assert trace(low, [(0, 1)] * 3) == [1, 1, 1]
    assert PolicySettings.build("specdecode", 20).make().gamma == 20
    assert make_policy("gammatune", 20, gamma_max=16).gamma == 16
    s = PolicySettings.build("gammatune+", 4)
    assert s.with_changes(gamma0=12).params.gamma_max == 12  # the UI's γ0 field carries the cap with it
    assert s.with_changes(gamma0=12, gamma_max=10).make().gamma == 10
    hf = make_policy("hf-heuristic", 6)  # transformers' schedule has no cap; gammatune's is γ_max
    assert max(trace(hf, [(6, 6), (8, 8), (8, 8)])) == hf.params.gamma_max == 8


def test_every_method_that_reads_a_parameter_can_be_tuned():
    """`bench --tune-method` reads the registry: a new method that reads a parameter is tunable with no other edit."""
    from gammatune_tui.engine.policies import METHODS, TUNABLE_METHODS

    assert TUNABLE_METHODS == tuple(m for m in METHODS if m != "specdecode")
