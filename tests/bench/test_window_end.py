"""Where a window ends, written once: the simulator's fast paths and the oracle's options read `window_end`.

`step_rule.window_end` is the rule `window_ends` applies token by token, for
a proposal whose first EOS is known at once. What these tests hold: it
agrees with the token-by-token rule everywhere, and the three places that
used to write it inline (the draft-model replay's fast path, the oracle's
options, prompt lookup's options) call it. That the fast paths still replay
exactly is held by tests/bench/test_simulate.py and test_oracle.py.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gammatune_tui.bench.sim import lookup_trace, model_trace, oracle, simulate
from gammatune_tui.bench.sim.lookup_trace import LookupTrace, repropose
from gammatune_tui.bench.sim.simulate import Trace
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.policies.policy_base import TokenStats
from gammatune_tui.engine.policies.step_rule import cut_window, window_end, window_ends

EOS = 1


@settings(max_examples=200, deadline=None)
@given(proposal=st.lists(st.integers(1, 4), max_size=14), window=st.integers(0, 14))
def test_window_end_is_the_token_by_token_rule(proposal, window):
    policy = PolicySettings.build("specdecode", 4).make()   # never stops early
    stats = [TokenStats(0.5, 0.5, 0.5)] * len(proposal)
    by_token = min(window, len(proposal))
    for i in range(by_token):
        if window_ends(i + 1, window, proposal[i], stats[i], stats[:i], policy, {EOS})[0]:
            by_token = i + 1
            break
    eos_at = next((i for i, x in enumerate(proposal) if x == EOS), None)
    assert window_end(min(window, len(proposal)), eos_at) == by_token
    assert cut_window(proposal, stats, window, policy, {EOS}) == (by_token, False)


def test_the_fast_paths_call_the_one_rule(monkeypatch):
    # a draft model's replay (simulate.play_trace) and its oracle options both live in model_trace.py
    calls = {"model_trace": 0, "lookup_trace": 0}
    for name, module in (("model_trace", model_trace), ("lookup_trace", lookup_trace)):
        def counted(window, eos_at, name=name):
            calls[name] += 1
            return window_end(window, eos_at)
        monkeypatch.setattr(module, "window_end", counted)
    # the draft agrees twice, then proposes 7 and goes on 3, EOS: a window of 6 ends on that EOS
    trace = Trace(prompt_id="t", prompt_ids=[3], tokens=[2, 2, 5] + [2] * 5, draft_ids=[2, 2, 7] + [2] * 5,
                  draft_prob=[0.9] * 8, off_ids={2: [3, EOS]}, off_prob={2: [0.5, 0.5]}, off_depth=4,
                  eos_ids=[EOS], max_new_tokens=8, draft_entropy=[0.1] * 8, off_entropy={2: [0.2, 0.2]})
    steps: list = []
    simulate.play_trace(trace, PolicySettings.build("specdecode", 6).make(), steps_out=steps)
    assert steps[0].drafted == 5   # 2, 2, 7, 3, EOS: cut after the drafted EOS
    assert oracle.step_options(trace, 0, 5)[-1] == (5, 5, 2, 3)
    bare = LookupTrace(prompt_id="l", prompt_ids=[2, 3, 2, 3, EOS, 2], tokens=[3, 2, 3], proposals=[], tops=[],
                       chosen=[], depth=4, sources=[], ngram_min=1, ngram_max=2, eos_ids=[EOS], max_new_tokens=3)
    options = lookup_trace.window_options(repropose(bare, 1, 2), 0, 4)
    assert all(calls.values()), calls
    assert max(d for _, d, _, _ in options) <= 4
