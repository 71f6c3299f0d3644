"""γ0 against the γ bounds (issue 17 row 9), `--paper-defaults`, and the seventh method from the CLI."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.engine.policies import PAPER_DEFAULTS
from clihelpers import invoke


def _events(capsys, pair_args, *extra):
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "10", "--raw", "-t", "0", "--json", *extra],
                            capsys)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _steps(events):
    return [e for e in events if e["type"] == "step"]


def test_gamma_one_runs_at_one_the_floor_follows_it(capsys, pair_args):
    steps = _steps(_events(capsys, pair_args, "--method", "gammatune", "--gamma", "1"))
    assert steps[0]["gamma"] == 1 and steps[0]["params"]["gamma_min"] == 1
    assert min(s["gamma"] for s in steps) == 1  # never pushed up to a default floor above it


def test_gamma_above_the_default_cap_moves_the_cap(capsys, pair_args):
    steps = _steps(_events(capsys, pair_args, "--method", "hf-heuristic", "--gamma", "12"))
    assert steps[0]["gamma"] == 12 and steps[0]["params"]["gamma_max"] == 12
    assert max(s["gamma"] for s in steps) <= 12  # hf-heuristic's +2 stops at the cap too


@pytest.mark.parametrize("extra, flags", [
    (["--gamma", "100", "--gamma-max", "16"], ("--gamma 100", "--gamma-max 16")),
    (["--gamma", "1", "--gamma-min", "3"], ("--gamma 1", "--gamma-min 3")),
])
def test_gamma_outside_bounds_the_user_set_is_one_line_naming_the_flags(capsys, pair_args, extra, flags):
    code, out, err = invoke(["run", "hi", *pair_args, *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1
    assert all(f in lines[0] for f in flags), lines[0]


def test_paper_defaults_are_one_flag_away(capsys, pair_args):
    params = _steps(_events(capsys, pair_args, "--paper-defaults"))[0]["params"]
    assert {k: params[k] for k in PAPER_DEFAULTS} == PAPER_DEFAULTS
    params = _steps(_events(capsys, pair_args, "--paper-defaults", "--tau", "0.1", "--gamma", "2"))[0]["params"]
    assert params["tau"] == 0.1 and params["eta"] == 0.5 and params["gamma_min"] == 2  # flags win; the floor follows γ0


def test_costaware_runs_and_records_its_parameters(capsys, pair_args):
    events = _events(capsys, pair_args, "--method", "costaware", "--calib-weight", "5", "--calib-forget", "0.9")
    steps = _steps(events)
    assert steps and all(s["method"] == "costaware" for s in steps)
    assert steps[0]["params"]["calib_weight"] == 5.0 and steps[0]["params"]["calib_forget"] == 0.9
    assert sum(len(s["emitted"]) for s in steps) == 10
    code, _, err = invoke(["run", "hi", *pair_args, "--method", "costaware", "--calib-forget", "0"], capsys)
    assert code == 2 and "--calib-forget must be" in err
