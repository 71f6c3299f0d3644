"""The timing passes' shares played in a forked child are the shares played in one process (bench/modes/pass_shares.py).

`bench --simulate` plays the later passes on the second core while the sweep plays; its tables and JSON must
not change by one bit for it.
"""

from __future__ import annotations

import pytest

from gammatune_tui.bench.modes import pass_shares
from gammatune_tui.bench.modes.pass_shares import PassShares
from gammatune_tui.bench.sim.reference import share_rows
from gammatune_tui.bench.sim.replays import Replays
from gammatune_tui.bench.sim.simulate import simulate_sweep
from gammatune_tui.bench.sim.trace_record import record_trace

from test_replays import COSTS, PROMPTS

METHODS = ["specdecode", "costaware", "adaptive-k", "gammatune"]   # two that plan by cost, two that do not
GAMMAS = [2, 6]


@pytest.fixture(scope="module")
def traces(bench_pair):
    return [record_trace(bench_pair, k, v, 40, 17, bench_pair.eos_ids) for k, v in PROMPTS.items()]


def _rows(traces, per_pass_from):
    replays = Replays()
    simulate_sweep(traces, METHODS, GAMMAS, COSTS[0], replays=replays)   # as --simulate: the sweep fills the memo
    return share_rows(traces, COSTS[0], COSTS[1:], METHODS, GAMMAS, max_new=40, replays=replays,
                      per_pass=per_pass_from(replays))


def test_passes_played_in_a_child_give_the_shares_of_one_process(traces):
    split = PassShares(traces, COSTS[1:], METHODS, GAMMAS, {}, 40)
    assert split.proc is not None   # the test machine has two cores and fork
    assert _rows(traces, split.result) == _rows(traces, lambda replays: None)
    assert split.proc is None       # reaped


def test_one_core_plays_every_pass_here(traces, monkeypatch):
    monkeypatch.setattr(pass_shares, "_cores", lambda: 1)
    split = PassShares(traces, COSTS[1:], METHODS, GAMMAS, {}, 40)
    assert split.proc is None
    assert _rows(traces, split.result) == _rows(traces, lambda replays: None)


def test_a_child_that_dies_leaves_its_passes_to_the_parent(traces):
    split = PassShares(traces, COSTS[1:], METHODS, GAMMAS, {}, 40)
    split.proc.kill()
    split.proc.join()
    assert _rows(traces, split.result) == _rows(traces, lambda replays: None)
