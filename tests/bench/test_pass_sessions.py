"""The timing passes' cost-planning sessions played in a forked child give the shares of one process
(bench/modes/pass_sessions.py).

`bench --simulate` plays them on the second core while the sweep plays; its tables and JSON must not change by
one bit for it, and no session may be played twice.
"""

from __future__ import annotations

import pytest

from gammatune_tui.bench.modes import pass_sessions
from gammatune_tui.bench.modes.pass_sessions import PassSessions
from gammatune_tui.bench.sim.reference import share_rows
from gammatune_tui.bench.sim.replays import Replays
from gammatune_tui.bench.sim.simulate import simulate_sweep
from gammatune_tui.bench.sim.trace_record import record_trace

from test_replays import COSTS, PROMPTS

METHODS = ["specdecode", "costaware", "adaptive-k", "gammatune"]   # two that plan by cost, two that do not
GAMMAS = [2, 6]
POOLED, PASSES = COSTS[0], COSTS[1:]


@pytest.fixture(scope="module")
def traces(bench_pair):
    return [record_trace(bench_pair, k, v, 40, 17, bench_pair.eos_ids) for k, v in PROMPTS.items()]


def _shares(traces, sessions=None):
    """As --simulate: the sweep fills the memo, the child's sessions are kept, then the shares; and what was played."""
    replays = Replays()
    simulate_sweep(traces, METHODS, GAMMAS, POOLED, replays=replays)
    kept = sessions.fill(replays) if sessions is not None else 0
    before = replays.played
    rows = share_rows(traces, POOLED, PASSES, METHODS, GAMMAS, max_new=40, replays=replays)
    return rows, kept, replays.played - before


def test_sessions_played_in_a_child_give_the_shares_of_one_process_and_are_not_played_again(traces):
    sessions = PassSessions(traces, PASSES, METHODS, GAMMAS, {}, 40)
    assert sessions.proc is not None   # the test machine has two cores and fork
    rows, kept, played_after = _shares(traces, sessions)
    alone, _, played_alone = _shares(traces)
    assert rows == alone
    assert kept == len(PASSES) * 2 * len(GAMMAS) * len(traces)   # costaware and adaptive-k under each pass
    assert played_after == played_alone - kept                   # share_rows priced them instead of playing them
    assert sessions.proc is None                                  # reaped


def test_one_core_plays_them_in_share_rows(traces, monkeypatch):
    monkeypatch.setattr(pass_sessions, "_cores", lambda: 1)
    sessions = PassSessions(traces, PASSES, METHODS, GAMMAS, {}, 40)
    assert sessions.proc is None
    assert _shares(traces, sessions)[0] == _shares(traces)[0]


def test_a_child_that_dies_leaves_its_sessions_to_share_rows(traces):
    sessions = PassSessions(traces, PASSES, METHODS, GAMMAS, {}, 40)
    sessions.proc.kill()
    sessions.proc.join()
    rows, kept, _ = _shares(traces, sessions)
    assert kept == 0 and rows == _shares(traces)[0]
