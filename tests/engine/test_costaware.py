"""costaware: its calibration table and its stop rule against hand-worked steps."""

from __future__ import annotations

import pytest

from gammatune_tui.engine.policies.confidence import BIN_EDGES, N_BINS, Calibration, Prior, bin_of, shipped_prior
from gammatune_tui.engine.policies.costaware import new_state
from gammatune_tui.engine.policies.goodput import FALLBACK_C_DRAFT
from gammatune_tui.engine.policies import METHODS, PolicySettings, make_policy
from gammatune_tui.engine.policies.policy_base import TokenStats
from gammatune_tui.errors import InvalidParameter

TOP = N_BINS - 1  # the bin of confidences ≥ 0.99


def _prior(top: float = 1.0, rest: float = 0.5, mean: float = 0.5) -> Prior:
    return Prior(tuple([rest] * TOP + [top]), mean, "test")


def _fixed(weight: float = 1e12, **kw):
    """A state whose table stays at the prior (an enormous prior weight) and whose costs are known."""
    return new_state(weight, 1.0, 16, _prior(**kw))


def test_a_seventh_method_everywhere_the_others_are():
    assert METHODS[-1] == "costaware" and len(METHODS) == 12
    p = make_policy("costaware", 4)
    assert p.may_stop_early and p.gamma == 4
    assert set(p.describe()) >= {"calib_weight", "calib_forget", "gamma_min", "gamma_max"}
    # its own parameters are recorded only where they differ from the defaults, as adaptive-k's are
    assert "calib_weight" not in PolicySettings.build("gammatune", 4).params.to_json()
    assert PolicySettings.build("costaware", 4, calib_weight=7).params.to_json()["calib_weight"] == 7.0


def test_bins_and_the_shipped_prior():
    assert [bin_of(x) for x in (0.0, 0.05, 0.1, 0.55, 0.949, 0.95, 0.99, 1.0)] == [0, 0, 1, 5, 9, 10, 11, 11]
    prior = shipped_prior()
    assert prior.source.startswith("demo pair") and len(prior.accept) == len(BIN_EDGES) + 1
    # fitted on the demo pair: a confident draft token is accepted far more often than an unsure one
    assert prior.accept[TOP] > 0.95 > 0.5 > prior.accept[0]


def test_the_table_learns_the_judged_tokens_only_and_forgets():
    cal = Calibration(_prior(), weight=2.0, forget=0.5)
    # three drafted, one accepted: token 1 accepted, token 2 rejected, token 3 never judged
    cal.learn([0.995, 0.55, 0.05], accepted=1, drafted=3)
    assert cal.hits[TOP] == 1 and cal.seen[TOP] == 1 and cal.seen[5] == 1 and cal.hits[5] == 0 and cal.seen[0] == 0
    assert cal.accept(0.55) == pytest.approx((2 * 0.5 + 0) / (2 + 1))
    assert cal.accept(0.999) == pytest.approx((2 * 1.0 + 1) / (2 + 1))
    cal.learn([0.999], accepted=1, drafted=1)  # the next window: the old counts halve, then its token is learnt
    assert cal.seen[5] == 0.5 and cal.accept(0.55) == pytest.approx(1 / 2.5)
    assert cal.seen[TOP] == 1.5 and cal.hits[TOP] == 1.5


def test_a_plain_step_teaches_the_table_nothing_so_it_forgets_nothing():
    """Counts fade as new verdicts replace them, not with time (they faded on every step before)."""
    cal = Calibration(_prior(), weight=2.0, forget=0.5)
    cal.learn([0.55, 0.05], accepted=0, drafted=2)
    before = (list(cal.hits), list(cal.seen), cal.mean())
    for _ in range(10):
        cal.learn([], accepted=0, drafted=0)  # a plain target step: no token judged
    assert (cal.hits, cal.seen, cal.mean()) == before


def test_at_the_defaults_a_sessions_own_tokens_soon_outweigh_the_prior():
    """calib_weight 5, calib_forget 0.95: six rejections in a row halve a bin's promise (20 / 0.9 kept 81 % of it)."""
    p = make_policy("costaware", 4)
    cal = p.state.calibration
    before = cal.accept(0.55)
    for _ in range(6):
        cal.learn([0.55], accepted=0, drafted=1)
    assert cal.accept(0.55) < before / 2
    # forgetting: the prior comes back as newer verdicts (here on other bins) replace the session's evidence
    for _ in range(60):
        cal.learn([0.999], accepted=1, drafted=1)
    assert cal.accept(0.55) > 0.9 * before


def test_a_session_that_stopped_drafting_drafts_again_once_its_rate_falls():
    """SmolLM2 with self:int8: a dear draft, one bad patch, then γ = 0 for good (2 of 8 held-out prompts).

    Plain steps used to fade the table back to the prior, whose acceptance
    (0.3 here; the demo pair's for the shipped one) makes no window pay, and no
    verdict ever came to correct it. Now the table keeps the session's 0.85,
    the rate R falls to the plain steps' 1 / 63 ms, and at that price a window
    of 2 pays again (0.85 + 0.72 > 15.9 · (2 · 34 + 103 + slope − 63) ms).
    """
    s = new_state(1.0, 0.9, 8, Prior(tuple([0.3] * N_BINS), 0.3, "test"))

    def step(drafted: int, accepted: int, verify_s: float) -> None:
        s.observe_costs(0.034 * drafted, drafted, verify_s, drafted + 1)
        s.update(accepted, drafted, [0.5] * drafted)

    for _ in range(10):
        step(4, 4, 0.100)   # good windows: 5 tokens in 0.236 s
    for _ in range(3):
        step(1, 0, 0.103)   # a bad patch: every first token rejected
    assert s.calibration.mean() == pytest.approx(0.850, abs=5e-4)
    plans = []
    for _ in range(12):
        step(0, 0, 0.063)   # plain target steps, as planned
        plans.append(s.plan(1, 8))
    assert plans[:6] == [0] * 6 and plans[6:] == [2] * 6
    assert s.calibration.mean() == pytest.approx(0.850, abs=5e-4)   # the table kept what the session taught it


def test_keeps_drafting_while_a_token_pays_for_its_time():
    s = _fixed()
    # one step: drafting 2 cost 2 ms, verifying 3 tokens 10 ms, 2 tokens came out: R = 2 / 0.012 s
    s.observe_costs(0.002, 2, 0.010, 3)
    s.update(accepted=1, drafted=2, confidences=[])
    # one more token costs 1 ms (the verify line is flat with one size seen): R·c = 1/6 of a token;
    # it is worth P_k · ā = P_k / 2, so drafting goes on while P_k > 1/3
    assert s.plan(1, 16) == 16  # the top bin promises 1.0: nothing caps the window below γ_max
    assert s.keep([0.999]) is True                # P = 1
    assert s.keep([0.999, 0.55]) is True          # P = 0.5: 0.25 > 1/6
    assert s.keep([0.999, 0.55, 0.55]) is False   # P = 0.25: 0.125 < 1/6
    assert s.keep([0.999, 0.55]) is True          # asked again: the same answer (a pure question)


def test_does_not_draft_when_even_the_first_token_does_not_pay():
    s = _fixed()
    s.observe_costs(0.05, 1, 0.01, 2)  # drafting one token dearer than a target pass
    s.update(accepted=0, drafted=1, confidences=[])
    assert s.plan(1, 16) == 0
    p = make_policy("costaware", 4, gamma_min=1)
    p.state = s
    p.update(accepted=0, drafted=0)  # a plain step is a step like any other
    assert p.gamma == 0 and p.describe()["gamma0"] == 4


def test_looks_past_a_dear_next_token_to_a_cheap_window():
    """A verify curve that is not convex: verifying 4 tokens is cheap, 3 dear; after one token, draft on."""
    s = _fixed(top=1.0, rest=0.9, mean=0.9)
    for k, secs in ((2, 0.010), (3, 0.030), (4, 0.012)):
        s.observe_costs(0.0, k - 1, secs, k)
        s.update(accepted=0, drafted=k - 1, confidences=[])
    prices = s.priced()  # R · C(k), R = 3 tokens / 0.052 s
    assert s.keep([0.5]) is True  # P = 0.9
    # the next token alone does not pay (0.81 < C(2) − C(1)); two more do (0.81 + 0.729 > C(3) − C(1))
    assert 0.9 * 0.9 < prices[2] - prices[1] and 0.9 * (0.9 + 0.81) > prices[3] - prices[1]


def test_before_any_timing_vllms_default_ratio_prices_a_token():
    s = _fixed(rest=0.5, mean=0.5)
    assert s.priced()[3] == pytest.approx(3 * FALLBACK_C_DRAFT)
    assert s.keep([0.5]) is True  # P = 0.5: 0.5 · 0.5 > 0.1144
    assert s.keep([0.5] * 2) is True  # P = 0.25: 0.125 > 0.1144
    assert s.keep([0.5] * 3) is False  # P = 0.125: 0.0625, and no longer window catches up with 0.1144 a token


def test_invalid_parameters_are_refused_by_name():
    for params, name in ((dict(calib_weight=0), "calib_weight"), (dict(calib_forget=0), "calib_forget"),
                         (dict(calib_forget=1.5), "calib_forget")):
        with pytest.raises(InvalidParameter, match=name):
            make_policy("costaware", 4, **params)


def test_deterministic_and_replayable():
    seq = [(0.999, 0.9, 0.3), (0.2,), (0.999, 0.999, 0.999, 0.6)]
    runs = []
    for _ in range(2):
        p = make_policy("costaware", 3, gamma_min=1)
        out = []
        for confs in seq:
            window = [TokenStats(c, c, 0.0) for c in confs]
            kept = [p.keep_drafting(c, c, 0.0, window[:i]) for i, c in enumerate(confs)]
            p.observe_costs(0.001 * len(confs), len(confs), 0.008 + 0.001 * len(confs), len(confs) + 1)
            p.update(accepted=len(confs) - 1, drafted=len(confs), window=window)
            out.append((kept, p.gamma))
        runs.append(out)
    assert runs[0] == runs[1]


def test_raising_gamma_max_mid_session_prices_the_longer_windows():
    """The app's γ max field raised while costaware runs: its next question must not fail (it raised KeyError)."""
    p = make_policy("costaware", 4, gamma_max=4)
    window = [TokenStats(0.99, 0.99, 0.0)] * 2
    for _ in range(3):
        p.observe_costs(0.002, 2, 0.01, 3)
        p.update(accepted=2, drafted=2, window=window)
    p.set_params(gamma_max=8)
    confident = [TokenStats(0.999, 0.999, 0.0)] * 6
    assert all(isinstance(p.keep_drafting(0.999, 0.999, 0.0, confident[:i]), bool) for i in range(6))
