"""`--tune` searches the parameters the chosen method reads, scored by the exact simulator."""

from __future__ import annotations

import pytest

from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.trace_record import record_trace
from gammatune_tui.bench.sim.tune import current_defaults, tune, tuned_names

GRID = {"eta": [0.3, 0.7], "delta": [0, 2], "tau": [0.2, 0.6], "gamma_min": [1, 4], "gamma_max": [6, 12],
        "ema_alpha": [0.3, 1.0], "alpha_prior": [0.5, 0.85], "cooldown": [0, 2], "calib_weight": [2, 80],
        "calib_forget": [0.5, 1.0]}


@pytest.fixture(scope="module")
def traces(bench_pair):
    prompts = {"p0": [5, 9, 13, 22, 7], "p1": [3, 4, 5, 6, 7, 8, 30, 31]}
    return [record_trace(bench_pair, k, v, 40, 11, bench_pair.eos_ids) for k, v in prompts.items()]


@pytest.mark.parametrize("method, names", [
    ("adaptive-k", ("ema_alpha", "alpha_prior", "cooldown", "gamma_min", "gamma_max")),
    ("gammatune+", ("eta", "delta", "tau", "gamma_min", "gamma_max")),
    ("costaware", ("calib_weight", "calib_forget", "gamma_max"))])
def test_tune_moves_only_the_methods_own_parameters(traces, method, names):
    assert tuned_names(method) == names
    cost = CostModel(0.002, {1: 0.01, 4: 0.013, 12: 0.025}, step_s=0.0005)
    best, start, scored, _ = tune(traces, cost, [1, 4, 8], method, grid=GRID, max_rounds=2)
    assert start.params == {**current_defaults(), "gamma_max": min(12, current_defaults()["gamma_max"])}  # ≤ depth + 1
    assert best.score >= start.score
    fixed = set(current_defaults()) - set(names)
    assert all(s.params[k] == start.params[k] for s in scored for k in fixed)
    assert any(s.params[k] != start.params[k] for s in scored for k in names)
