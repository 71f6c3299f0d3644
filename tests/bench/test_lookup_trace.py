"""Prompt lookup's traces: replays equal live runs step for step, the oracle bounds every policy, files round-trip."""

from __future__ import annotations

import pytest

from tiny_models import target_only_pair
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.lookup_trace import LookupTrace, record_lookup_trace, repropose
from gammatune_tui.bench.sim.trace_kinds import trace_from_json
from gammatune_tui.bench.sim.oracle import oracle_run
from gammatune_tui.bench.sim.simulate import SimStep, TraceTooShallow, check_against_live, play_trace
from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig, SpeculativeDecoder

COST = CostModel(draft_token_s=1e-5, verify_s={1: 1e-3, 2: 1.1e-3, 5: 1.4e-3, 9: 2e-3, 17: 3.5e-3}, step_s=2e-4,
                 emit_token_s=1e-5)


@pytest.fixture(scope="module")
def pair():
    return target_only_pair("prompt-lookup")


@pytest.fixture(scope="module")
def trace(pair):
    ids = pair.encode_prompt("def fib(n):\n    return", raw=True)
    return record_lookup_trace(pair, "p", ids, 48, 16, pair.eos_ids, 1, 3)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("gamma0", [1, 4])
def test_a_replay_is_the_live_run_step_for_step(pair, trace, method, gamma0):
    settings = PolicySettings.build(method, gamma0)
    dec = SpeculativeDecoder(pair, settings, SamplingConfig())
    events = list(dec.generate(list(trace.prompt_ids), max_new_tokens=48))
    check = check_against_live(trace, settings, events, COST, 48)
    assert check.steps_equal and check.output_equal, check


def test_the_trace_sees_proposals_acceptances_and_empty_steps(trace):
    steps: list[SimStep] = []
    rec = play_trace(trace, PolicySettings.build("specdecode", 4).make(), None, COST, steps)
    assert rec.tokens == 48 and 0 < rec.accepted < rec.drafted
    assert any(s.drafted == 0 for s in steps) and rec.draft_calls == 0
    assert all(len(p) in (0, trace.depth) for p in trace.proposals)  # a match fills the window


def test_the_oracle_is_never_slower_than_a_policy(trace):
    best = oracle_run(trace, COST)
    for method in METHODS:
        for g in (1, 2, 4, 8):
            r = play_trace(trace, PolicySettings.build(method, g).make(), None, COST)
            assert best.record.wall_s <= r.wall_s + 1e-12, (method, g)
    assert best.record.tokens == 48


def test_traces_round_trip_and_reproposals_match_a_fresh_recording(pair, trace):
    back = trace_from_json(trace.to_json())
    assert isinstance(back, LookupTrace) and back == trace
    other = record_lookup_trace(pair, "p", trace.prompt_ids, 48, 16, pair.eos_ids, 2, 2)
    again = repropose(trace, 2, 2)
    assert again.proposals == other.proposals and again.tops == other.tops and again.tokens == other.tokens
    with pytest.raises(TraceTooShallow):
        play_trace(trace, PolicySettings.build("gammatune+", 20, gamma_max=20).make())


def test_windows_beyond_the_recorded_depth_continue_the_copy(pair, trace):
    """hf-heuristic grows its window without bound; past the depth the trace continues the copy, exactly."""
    shallow = repropose(trace, 1, 3, depth=2)
    for g in (1, 4):
        settings = PolicySettings.build("hf-heuristic", g)
        dec = SpeculativeDecoder(pair, settings, SamplingConfig())
        events = list(dec.generate(list(trace.prompt_ids), max_new_tokens=48))
        assert check_against_live(shallow, settings, events, COST, 48).steps_equal
        assert any(len(e.drafted) > 2 for e in events[1:-1])
    with pytest.raises(TraceTooShallow):  # a policy that reads the stand-ins needs them recorded
        play_trace(shallow, PolicySettings.build("gammatune+", 4).make())
    assert oracle_run(shallow, COST).record.wall_s == pytest.approx(oracle_run(trace, COST).record.wall_s)


def test_reference_rows_on_a_lookup_trace(trace):
    """Best fixed γ, the perfect signal and the oracle without skipping play prompt lookup's traces too."""
    from gammatune_tui.bench.sim.reference import NO_SKIP, SIGNAL, share_rows, signal_record

    rec = signal_record(trace, COST, 48, 16)
    assert rec.tokens == 48 and rec.accepted == rec.drafted  # it never drafts a token that will be rejected
    rows = {r.name: r for r in share_rows([trace], COST, [COST], ["specdecode"], [1, 4])}
    assert all(0 < r.share <= 1 + 1e-9 for r in rows.values())
    no_skip = oracle_run(trace, COST, min_window=1, name=NO_SKIP)
    # a position with nothing to propose still takes a plain step: the no-skip oracle is not forced past it
    assert no_skip.record.tokens == 48 and rows[SIGNAL].share >= rows["specdecode"].share - 1e-9
