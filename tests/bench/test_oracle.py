"""The hindsight-optimal γ never loses to a policy, equals an exhaustive search, and prices like the simulator."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gammatune_tui.bench.sim.oracle import (
    ORACLE, WindowScript, oracle_records, oracle_run, regret, step_options, summarize,
)
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.simulate import Trace, TraceTooShallow, play_trace
from gammatune_tui.bench.sim.trace_record import record_trace
from gammatune_tui.engine.policies import METHODS, Policy, PolicySettings

EOS = 1
GAMMAS = (1, 2, 3, 4, 6, 8, 12)


@st.composite
def traces(draw, max_len=24, vocab=6):
    """A valid greedy trace: EOS only last, off-path proposals after every miss (ending at a drafted EOS)."""
    n = draw(st.integers(1, max_len))
    ended = draw(st.booleans())
    tokens = [draw(st.integers(2, vocab)) for _ in range(n - 1)] + [EOS if ended else draw(st.integers(2, vocab))]
    depth = draw(st.integers(0, 12))
    dids, probs, ents, off_ids, off_prob, off_ent = [], [], [], {}, {}, {}
    for j, tok in enumerate(tokens):
        agree = draw(st.booleans())
        x = tok if agree else draw(st.integers(1, vocab).filter(lambda v, t=tok: v != t))
        dids.append(x)
        probs.append(draw(st.floats(0.01, 1.0)))
        ents.append(draw(st.floats(0.0, 3.0)))   # the entropy policies (adaedl, svip) read it
        if x != tok:
            xs, ps, hs = [], [], []
            if x != EOS:
                for _ in range(depth):
                    y = draw(st.integers(1, vocab))
                    xs.append(y)
                    ps.append(draw(st.floats(0.01, 1.0)))
                    hs.append(draw(st.floats(0.0, 3.0)))
                    if y == EOS:
                        break
            off_ids[j], off_prob[j], off_ent[j] = xs, ps, hs
    max_new = n + (draw(st.integers(0, 5)) if ended else 0)
    return Trace(prompt_id="t", prompt_ids=[3], tokens=tokens, draft_ids=dids, draft_prob=probs, off_ids=off_ids,
                 off_prob=off_prob, off_depth=depth, eos_ids=[EOS], max_new_tokens=max_new, session_s=0.01,
                 plain_s=0.05 * n, draft_entropy=ents, off_entropy=off_ent)


@st.composite
def costs(draw):
    """Cost models, verify curves not necessarily monotone (measured ones are not always)."""
    ks = draw(st.lists(st.integers(1, 14), min_size=1, max_size=5, unique=True))
    return CostModel(draft_token_s=draw(st.floats(0.0, 0.03)), verify_s={k: draw(st.floats(0.001, 0.1)) for k in ks},
                     step_s=draw(st.floats(0.0, 0.01)), emit_token_s=draw(st.floats(0.0, 0.002)),
                     session_s=draw(st.floats(0.0, 0.01)))


def _policy_walls(trace, cost, max_new=None):
    for m in METHODS:
        for g in GAMMAS:
            for params in ({}, {"gamma_min": 1, "tau": 0.6}):
                try:
                    yield m, g, play_trace(trace, PolicySettings.build(m, g, **params).make(), max_new, cost).wall_s
                except TraceTooShallow:
                    continue


@settings(max_examples=60, deadline=None)
@given(trace=traces(), cost=costs(), cut=st.integers(0, 6))
def test_oracle_never_loses_to_a_policy(trace, cost, cut):
    max_new = max(1, min(trace.max_new_tokens, len(trace.tokens)) - cut)
    o = oracle_run(trace, cost, max_new)
    assert o.record.tokens == min(len(trace.tokens), max_new)
    assert o.record.wall_s == pytest.approx(trace.session_s + cost.session_s + o.best_s, rel=1e-12, abs=1e-15)
    for m, g, wall in _policy_walls(trace, cost, max_new):
        assert o.record.wall_s <= wall * (1 + 1e-9) + 1e-15, (m, g)


def _exhaustive(trace, cost, max_new):
    """Every window sequence the simulator will play, by depth-first search on replays of prefixes."""
    best = math.inf
    stack = [[]]
    while stack:
        prefix = stack.pop()
        steps = []
        try:
            rec = play_trace(trace, WindowScript(prefix), max_new, cost, steps)
        except TraceTooShallow:
            continue
        except ValueError:  # the session went on past the prefix: branch on the next window
            n = sum(s.emitted for s in steps)
            stack.extend(prefix + [w] for w in range(max_new - n))
            continue
        best = min(best, rec.wall_s)
    return best


@settings(max_examples=40, deadline=None)
@given(trace=traces(max_len=6), cost=costs())
def test_oracle_equals_exhaustive_search_on_small_traces(trace, cost):
    max_new = min(trace.max_new_tokens, len(trace.tokens))
    assert oracle_run(trace, cost, max_new).record.wall_s == pytest.approx(_exhaustive(trace, cost, max_new),
                                                                           rel=1e-12, abs=1e-15)


class Replayer(Policy):
    """Plays a fixed list of windows: a policy a user could never write, but any policy's windows are such a list."""

    name = "replayer"

    def __init__(self, windows):
        super().__init__(1, PolicySettings().params)
        self.windows, self.i = windows, 0
        self.gamma = windows[0]

    def update(self, accepted, drafted, window=()):
        self.i += 1
        self.gamma = self.windows[self.i] if self.i < len(self.windows) else 1


def _trace(tokens, draft, off, max_new=None, eos=(EOS,)):
    off_ids = {j: xs for j, xs in off.items()}
    return Trace("h", [3], tokens, draft, [0.9] * len(tokens), off_ids, {j: [0.5] * len(x) for j, x in off.items()},
                 max((len(x) for x in off.values()), default=0), list(eos), max_new or len(tokens), 0.0, 1.0)


def test_regret_is_one_for_the_oracles_windows_and_below_for_a_fixed_window():
    # draft agrees 5, misses, agrees 1, misses, agrees 3
    tokens = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    draft = [5, 6, 7, 8, 9, 2, 11, 3, 13, 14, 15]
    t = _trace(tokens, draft, {5: [11, 12, 13, 2, 4, 4, 4], 7: [13, 14, 15]})
    cost = CostModel(0.01, {1: 0.05, 2: 0.055, 8: 0.09})
    o = oracle_run(t, cost)
    mine = play_trace(t, Replayer(o.windows), cost=cost)
    fixed = play_trace(t, PolicySettings.build("specdecode", 4).make(), cost=cost)
    r = regret([mine, fixed], [o.record])
    assert r["replayer"].mean == 1.0 and r["replayer"].std == 0.0
    assert r["specdecode"].mean < 1.0
    assert r["specdecode"].mean == pytest.approx(o.record.wall_s / fixed.wall_s)


def test_oracle_windows_hand_worked_and_summary():
    tokens = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    draft = [5, 6, 7, 8, 9, 2, 11, 3, 13, 14, 15]
    t = _trace(tokens, draft, {5: [11, 12, 13, 2, 4, 4, 4], 7: [13, 14, 15]})
    cost = CostModel(0.01, {1: 0.05, 2: 0.055, 8: 0.09})
    o = oracle_run(t, cost)
    # each run exactly: 6 tokens for window 5 (run + correction), 2 for window 1, then 3 left and a run of
    # 3: window 2 (budget − 1) and the bonus token
    assert o.windows == [5, 1, 2]
    assert [(s.drafted, s.accepted, s.emitted) for s in o.steps] == [(5, 5, 6), (1, 1, 2), (2, 2, 3)]
    assert o.record.method == ORACLE and o.record.gamma0 is None and o.tokens_per_step == pytest.approx(11 / 3)
    s = summarize([t], [o])
    assert s.tokens == 11 and s.steps == 3 and s.mean_window == pytest.approx(8 / 3)
    assert s.speedup_over_plain == pytest.approx(1.0 / o.record.wall_s)
    # drafting dearer than a target pass: plain steps all the way
    dear = oracle_run(t, CostModel(1.0, {1: 0.05, 2: 0.055, 8: 0.09}))
    assert dear.windows == [0] * 11


def test_a_longer_window_wins_where_the_verify_curve_dips():
    # run of 2; verifying 4 tokens measured cheaper than 3: window 3 (one rejected draft) beats window 2
    tokens, draft = [5, 6, 7, 8], [5, 6, 2, 8]
    t = _trace(tokens, draft, {2: [8]}, max_new=4)
    cost = CostModel(0.001, {1: 0.05, 2: 0.05, 3: 0.09, 4: 0.06})
    o = oracle_run(t, cost)
    assert o.windows[0] == 3 and o.steps[0].drafted == 3 and o.steps[0].accepted == 2
    assert (3, 3, 2, 3) in step_options(t, 0, 3)


def test_budget_and_eos_edge_cases():
    tokens, draft = [5, 6, EOS], [5, 6, EOS]
    t = _trace(tokens, draft, {}, max_new=10)
    o = oracle_run(t, CostModel(0.001, {1: 0.05, 4: 0.06}))
    assert (3, 3, 3, 3) in step_options(t, 0, 9)  # a window past the end drafts up to the EOS and stops there
    # ... but drafting the EOS never pays: two drafts and the target's own EOS as the bonus
    assert o.windows == [2] and o.record.tokens == 3 and o.record.stop_reason == "eos"
    one = oracle_run(t, CostModel(0.001, {1: 0.05, 4: 0.06}), max_new_tokens=1)
    assert one.windows == [0] and one.record.tokens == 1  # no draft past the budget
    # the mismatching draft token is EOS: any window past the run drafts run + 1 tokens
    t2 = _trace([5, 6, 7, 8], [5, EOS, 7, 8], {1: []})
    assert step_options(t2, 0, 3) == [(0, 0, 0, 1), (1, 1, 1, 2), (2, 2, 1, 2)]
    # the off-path runs into EOS after one proposal: longer windows all draft 3
    t3 = _trace([5, 6, 7, 8, 9], [5, 2, 7, 8, 9], {1: [EOS]})
    assert step_options(t3, 0, 4) == [(0, 0, 0, 1), (1, 1, 1, 2), (2, 2, 1, 2), (3, 3, 1, 2)]
    # a capped oracle, and a budget the trace cannot honour
    assert max(oracle_run(t3, CostModel(0.0, {1: 0.05}), gamma_max=1).windows) <= 1
    with pytest.raises(ValueError, match="max_new_tokens"):
        oracle_run(t3, CostModel(0.0, {1: 0.05}), max_new_tokens=6)


def test_regret_per_category_and_subsets():
    ta = _trace([5, 6, 7, 8], [5, 6, 7, 8], {})
    tb = _trace([5, 6, 7, 8], [2, 2, 2, 2], {j: [3] * 4 for j in range(4)})
    ta.prompt_id, tb.prompt_id = "a", "b"
    cost = CostModel(0.01, {1: 0.05, 5: 0.06})
    orecs = oracle_records([ta, tb], cost)
    recs = [play_trace(t, PolicySettings.build("specdecode", g).make(), cost=cost) for g in (1, 3) for t in (ta, tb)]
    r = regret(recs, orecs, {"a": "easy", "b": "hard"})["specdecode"]
    assert set(r.per_gamma) == {1, 3} and set(r.per_category) == {"easy", "hard"}
    # a cell over one category is compared with the oracle over the same prompts
    only_a = regret([x for x in recs if x.prompt_id == "a"], orecs)["specdecode"]
    assert only_a.mean == pytest.approx(r.per_category["easy"])
    assert 0 < r.per_category["hard"] <= 1.0 and 0 < r.mean <= 1.0
    with pytest.raises(ValueError, match="no oracle run"):
        regret(recs, orecs[:1])


@pytest.fixture(scope="module")
def pair_traces(bench_pair):
    prompts = {"p0": [5, 9, 13, 22, 7], "p1": [3, 4, 5, 6, 7, 8, 30, 31], "p2": [40]}
    return [record_trace(bench_pair, k, v, 40, 23, bench_pair.eos_ids) for k, v in prompts.items()]


@pytest.mark.parametrize("cost", [
    CostModel(0.002, {1: 0.01, 2: 0.011, 4: 0.013, 8: 0.02, 16: 0.034}, step_s=0.0005, emit_token_s=0.0001),
    CostModel(0.004, {1: 0.01, 3: 0.009, 6: 0.014, 9: 0.012}),  # dips: not monotone
    CostModel(0.02, {1: 0.01, 24: 0.012}),  # a draft dearer than a target pass
])
def test_oracle_beats_every_policy_on_a_model_pairs_traces(pair_traces, cost):
    orecs = oracle_records(pair_traces, cost)
    recs = []
    for t, orec in zip(pair_traces, orecs):
        for m, g, wall in _policy_walls(t, cost):
            assert orec.wall_s <= wall * (1 + 1e-9), (t.prompt_id, m, g)
        recs += [play_trace(t, PolicySettings.build(m, g).make(), cost=cost) for m in METHODS for g in GAMMAS]
    shares = regret(recs, orecs)
    assert set(shares) == set(METHODS)
    assert all(0 < s.mean <= 1.0 + 1e-12 and max(s.per_gamma.values()) <= 1.0 + 1e-12 for s in shares.values())
