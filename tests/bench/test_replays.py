"""A kept session priced again under another cost model is the session played under it (bench/sim/replays.py).

`bench --simulate` prices each session under the pooled model and each timing pass; the tables and JSON must not
change by one bit for playing the cost-blind policies once.
"""

from __future__ import annotations

import pytest

from tiny_models import target_only_pair
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.lookup_trace import record_lookup_trace
from gammatune_tui.bench.sim.reference import best_fixed, share_rows, signal_record
from gammatune_tui.bench.sim.replays import Replays, priced
from gammatune_tui.bench.sim.session_play import plans_by_cost
from gammatune_tui.bench.sim.simulate import SimStep, play_trace, simulate_sweep
from gammatune_tui.bench.sim.trace_record import record_trace
from gammatune_tui.bench.sim.trace_sampled import record_sampled_trace
from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig

PROMPTS = {"p0": [5, 9, 13, 22, 7], "p1": [3, 4, 5, 6, 7, 8, 30, 31]}
COSTS = [
    CostModel(0.002, {1: 0.01, 2: 0.011, 4: 0.013, 8: 0.02, 16: 0.034}, step_s=0.0005, emit_token_s=0.0001),
    CostModel(0.004, {1: 0.01, 3: 0.009, 6: 0.014, 9: 0.012}),  # dips: not monotone
    CostModel(0.02, {1: 0.01, 24: 0.012}),  # a draft dearer than a target pass: the cost planners draft less
]


class PlayAll(Replays):
    """No memo: every request played, as before the memo."""

    def play(self, trace, make, key, max_new_tokens, cost):
        return play_trace(trace, make(), max_new_tokens, cost)


@pytest.fixture(scope="module")
def traces(bench_pair):
    greedy = [record_trace(bench_pair, k, v, 40, 17, bench_pair.eos_ids) for k, v in PROMPTS.items()]
    sampled = [record_sampled_trace(bench_pair, k, v, 40, 17, bench_pair.eos_ids,
                                    SamplingConfig(temperature=0.7, seed=1)) for k, v in PROMPTS.items()]
    lookup_pair = target_only_pair("prompt-lookup")
    ids = lookup_pair.encode_prompt("def fib(n):\n    return", raw=True)
    lookup = [record_lookup_trace(lookup_pair, "pl", ids, 40, 16, lookup_pair.eos_ids, 1, 3)]
    return greedy + sampled + lookup


@pytest.mark.parametrize("method", METHODS)
def test_every_method_priced_again_equals_it_played_under_each_cost_model(traces, method):
    replays = Replays()
    for g in (1, 4, 8):
        s = PolicySettings.build(method, g)
        for cost in COSTS + [None]:
            for t in traces:
                assert replays.play(t, s.make, s, None, cost) == play_trace(t, s.make(), None, cost), (t.prompt_id, g)
    # played once per session, unless the policy plans by cost: then once per cost model
    per_model = len(COSTS) + 1 if plans_by_cost(PolicySettings.build(method, 4).make()) else 1
    assert replays.played == 3 * len(traces) * per_model


def test_a_cost_planner_priced_again_would_be_wrong(traces):
    """Why the memo plays cost planners per model: their steps change with the prices."""
    planners = [m for m in METHODS if plans_by_cost(PolicySettings.build(m, 4).make())]
    assert {"costaware", "adaptive-k"} <= set(planners)
    wrong = 0
    for m in planners:
        s = PolicySettings.build(m, 4)
        for t in traces:
            steps: list[SimStep] = []
            rec = play_trace(t, s.make(), None, COSTS[0], steps)
            windows: dict[int, int] = {}
            for st in steps:
                windows[st.drafted] = windows.get(st.drafted, 0) + 1
            assert priced(rec, windows, COSTS[0], t.session_s) == rec
            wrong += priced(rec, windows, COSTS[2], t.session_s) != play_trace(t, s.make(), None, COSTS[2])
    assert wrong > 0


def test_the_sweep_the_references_and_the_shares_are_unchanged_by_the_memo(traces):
    methods, gammas = list(METHODS), [1, 4]
    replays = Replays()
    assert simulate_sweep(traces, methods, gammas, COSTS[0], replays=replays) == simulate_sweep(
        traces, methods, gammas, COSTS[0])
    for cost in COSTS:
        assert best_fixed(traces, cost, 40, 8, replays) == best_fixed(traces, cost, 40, 8, PlayAll())
        assert [signal_record(t, cost, 40, 8, replays) for t in traces] == [signal_record(t, cost, 40, 8)
                                                                           for t in traces]
    shared = share_rows(traces, COSTS[0], COSTS[1:], methods, gammas, max_new=40, replays=replays)
    assert shared == share_rows(traces, COSTS[0], COSTS[1:], methods, gammas, max_new=40, replays=PlayAll())
