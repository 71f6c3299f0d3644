"""Reference rows (best fixed γ, perfect signal, oracle without skipping) and ranks that respect the spread."""

from __future__ import annotations

import pytest

from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.oracle import oracle_run
from gammatune_tui.bench.sim.ranks import gap_ranks
from gammatune_tui.bench.sim.reference import (
    BEST_FIXED, NO_SKIP, SIGNAL, best_fixed, share_rows, signal_record, signal_windows,
)
from gammatune_tui.bench.sim.simulate import SimStep, Trace, play_trace
from gammatune_tui.engine import PolicySettings


def test_ranks_read_in_order_and_ties_are_shown():
    v = {"a": 0.80, "b": 0.79, "c": 0.70, "d": 0.69, "e": 0.50}
    s = {"a": 0.02, "b": 0.02, "c": 0.005, "d": 0.005, "e": 0.0}
    assert gap_ranks(v, s) == {"a": "1=", "b": "1=", "c": "3", "d": "4", "e": "5"}
    # a chain of small steps does not tie rows far apart: the gap is measured from the tie's first row
    assert gap_ranks({"a": 3.0, "b": 2.9, "c": 2.8}, {"a": 0.15, "b": 0.15, "c": 0.15}) == {"a": "1=", "b": "1=",
                                                                                          "c": "3"}
    # no spread at all ranks every row
    assert gap_ranks({"a": 1.0, "b": 2.0}, {}) == {"b": "1", "a": "2"}


def _trace():
    # the draft agrees on runs of 3, 0, 5, 1 ... tokens: a known structure
    toks = list(range(10, 40))
    dids = list(toks)
    for i in (3, 4, 10, 12, 20, 27):
        dids[i] = 99
    off = {i: [98] * 11 for i in (3, 4, 10, 12, 20, 27)}
    return Trace("t", [1, 2], toks, dids, [0.9] * 30, off, {k: [0.5] * 11 for k in off}, 11, [0], 30)


COST = CostModel(draft_token_s=0.002, verify_s={1: 0.010, 4: 0.012, 12: 0.020})


def test_perfect_signal_drafts_exactly_the_tokens_that_will_be_accepted():
    t = _trace()
    steps: list[SimStep] = []
    w = signal_windows(t, 12, 30)
    play_trace(t, PolicySettings.build("specdecode", 1).make())  # sanity: the trace plays
    rec = signal_record(t, COST, 30, 12)
    assert w[:3] == [3, 0, 5]  # a run of 3, then a rejection right away (a plain step), then 5
    assert rec.accepted == rec.drafted  # never drafts a token that is rejected
    # it is a bound for every causal policy here, and below the oracle (which may choose shorter windows)
    o = oracle_run(t, COST)
    assert o.record.wall_s <= rec.wall_s + 1e-12
    for g in (1, 2, 4, 8):
        assert rec.wall_s <= play_trace(t, PolicySettings.build("specdecode", g).make(), cost=COST).wall_s


def test_oracle_without_skipping_never_plays_a_plain_step_and_is_no_faster_than_the_oracle():
    t = _trace()
    # drafting is expensive here: the free oracle skips, the forbidden one may not
    cost = CostModel(draft_token_s=0.02, verify_s={1: 0.010, 2: 0.011, 12: 0.03})
    free = oracle_run(t, cost)
    no_skip = oracle_run(t, cost, min_window=1, name=NO_SKIP)
    assert 0 in free.windows
    assert 0 not in no_skip.windows[:-1] and no_skip.record.method == NO_SKIP
    assert free.record.wall_s <= no_skip.record.wall_s


def test_best_fixed_gamma_is_the_best_over_all_prompts():
    t = _trace()
    g, recs = best_fixed([t], COST, 30, 12)
    walls = {k: play_trace(t, PolicySettings.build("specdecode", k).make(), cost=COST).wall_s for k in range(1, 13)}
    assert walls[g] == min(walls.values()) and recs[0].wall_s == walls[g]


def test_share_rows_have_the_references_spreads_and_ranks():
    t = _trace()
    passes = [CostModel(0.002, {1: 0.010, 4: 0.012, 12: 0.020}), CostModel(0.003, {1: 0.011, 4: 0.014, 12: 0.025}),
              CostModel(0.002, {1: 0.009, 4: 0.011, 12: 0.019})]
    rows = share_rows([t, t], COST, passes, ["specdecode", "gammatune"], [2, 4])
    by = {r.name: r for r in rows}
    assert set(by) == {"specdecode", "gammatune", BEST_FIXED, SIGNAL, NO_SKIP}
    assert by[BEST_FIXED].detail.startswith("γ = ") and by[BEST_FIXED].reference
    assert all(0 < r.share <= 1 + 1e-9 for r in rows)
    assert by[SIGNAL].share >= by[BEST_FIXED].share  # (signal vs no-skip: either can win; both are bounds)
    assert all(len(r.passes) == 3 for r in rows) and by["specdecode"].pass_spread > 0
    assert [r.share for r in rows] == sorted((r.share for r in rows), reverse=True)
    assert rows[0].rank == "1"


def test_traces_cached_with_one_timing_pass_get_three_without_recording_again(bench_pair, tmp_path, monkeypatch):
    import json

    from rich.console import Console

    from gammatune_tui.bench.modes import trace_cache as tc
    from gammatune_tui.bench.live.protocol import PromptIds

    pid = [PromptIds("p0", [5, 9, 13, 22, 7]), PromptIds("p1", [40])]
    path = tmp_path / "traces.json"
    err = Console(stderr=True)
    first = tc.load_or_record(err, bench_pair, pid, 12, 4, path)
    assert first.source == "recorded" and len(first.passes) == tc.TIMING_PASSES
    data = json.loads(path.read_text())
    del data["cost_passes"]  # as kept before the decoder was timed more than once
    path.write_text(json.dumps(data))
    monkeypatch.setattr(tc, "record", lambda *a, **k: pytest.fail("the traces were recorded again"))
    again = tc.load_or_record(err, bench_pair, pid, 12, 4, path)
    assert again.source == "file" and len(again.passes) == tc.TIMING_PASSES
    assert [t.tokens for t in again.traces] == [t.tokens for t in first.traces]
    assert len(json.loads(path.read_text())["cost_passes"]) == tc.TIMING_PASSES  # kept for next time
    # passes kept by an older timing pass (windows interpolated, plain means) are taken again too
    data = json.loads(path.read_text())
    del data["timing"]
    data["cost_passes"] = [{**c, "verify_s": {"2": 1.0, "9": 1.0}} for c in data["cost_passes"]]
    path.write_text(json.dumps(data))
    third = tc.load_or_record(err, bench_pair, pid, 12, 4, path)
    assert len(third.passes) == tc.TIMING_PASSES and all(1 in c.verify_s for c in third.passes)
    assert json.loads(path.read_text())["timing"] == tc.TIMING_VERSION
