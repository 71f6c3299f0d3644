"""The simulator hands the entropy policies each drafted token's recorded entropy (issue 27)."""

from __future__ import annotations

import pytest

from gammatune_tui.bench.sim.simulate import SimStep, Trace, play_trace
from gammatune_tui.engine.policies import make_policy


def _trace(ents, miss_at=None):
    toks = [10 + i for i in range(8)]
    dids = list(toks)
    off_ids, off_prob, off_ent = {}, {}, {}
    if miss_at is not None:  # the draft disagrees there and goes on with two tokens of its own
        dids[miss_at] = 50
        off_ids[miss_at], off_prob[miss_at], off_ent[miss_at] = [51, 52], [0.9, 0.9], [0.1, 5.0]
    return Trace(prompt_id="p", prompt_ids=[3, 4], tokens=toks, draft_ids=dids, draft_prob=[0.9] * 8,
                 off_ids=off_ids, off_prob=off_prob, off_depth=4, eos_ids=[1], max_new_tokens=8,
                 draft_entropy=list(ents), off_entropy=off_ent)


def test_svip_stops_on_the_recorded_entropy_and_keeps_the_token():
    steps: list[SimStep] = []
    rec = play_trace(_trace([0.1, 0.1, 2.0, 0.1, 0.1, 0.1, 0.1, 0.1]), make_policy("svip", 4), steps_out=steps)
    # H > 0.6 at the third token: the window ends there with it (3 drafted, all accepted, + the target's token)
    assert steps == [SimStep(4, 3, 3, 4, True), SimStep(4, 3, 3, 4, False)]
    assert rec.tokens == 8


def test_entropy_after_a_disagreement_is_the_off_path_one():
    steps: list[SimStep] = []
    play_trace(_trace([0.1] * 8, miss_at=1), make_policy("svip", 5), steps_out=steps)
    # token 1 is rejected; the draft goes on with 51 (H 0.1, kept) and 52 (H 5.0: stop, kept): 4 drafted
    assert steps[0] == SimStep(5, 4, 1, 2, True)


def test_an_entropy_policy_refuses_a_trace_recorded_without_entropy():
    t = _trace([0.1] * 8)
    t.draft_entropy = None  # a trace file written before entropy was kept: the simulator reads NaN
    with pytest.raises(ValueError, match="entropy"):
        play_trace(t, make_policy("adaedl", 4))
