"""Each tunable is declared once (engine/policies/param_specs.py): the checks, the flags, the controls and the docs follow its row."""

from __future__ import annotations

from pathlib import Path

import pytest

from gammatune_tui.engine.policies.param_specs import PARAM_SPECS, SPECS
from gammatune_tui.engine.policies import (
    GROUPS, METHODS, REGISTRY, PolicyParams, make_policy, method_spec, parameter_table, readers,
)
from gammatune_tui.errors import InvalidParameter

DOC = Path(__file__).resolve().parents[2] / "docs" / "policies.md"


@pytest.mark.parametrize("params, message", [
    # the messages of the twelve checks written out by hand before the rows existed
    (dict(eta=0), "eta must be in (0, 1], got 0"),
    (dict(delta=-1), "delta must be a whole number >= 0, got -1"),
    (dict(delta=1.5), "delta must be a whole number, got 1.5"),
    (dict(tau=2), "tau must be in [0, 1], got 2"),
    (dict(gamma_min=0), "gamma_min must be a whole number >= 1, got 0"),
    (dict(gamma_max=0), "gamma_max must be a whole number >= 1, got 0"),
    (dict(ema_alpha=1.5), "ema_alpha must be in (0, 1], got 1.5"),
    (dict(alpha_prior=-0.1), "alpha_prior must be in [0, 1], got -0.1"),
    (dict(cooldown=-1), "cooldown must be a whole number >= 0, got -1"),
    (dict(calib_weight=0), "calib_weight must be > 0, got 0"),
    (dict(calib_forget=0), "calib_forget must be in (0, 1], got 0"),
    (dict(eta="x"), "eta must be a number, got 'x'"),
    (dict(gamma_min=5, gamma_max=4), "gamma_min must be <= gamma_max, got gamma_min=5 > gamma_max=4"),
])
def test_each_range_refuses_with_the_words_it_always_used(params, message):
    with pytest.raises(InvalidParameter) as err:
        PolicyParams.build(**params)
    assert str(err.value) == message
    with pytest.raises(InvalidParameter, match="gamma0 must be a whole number >= 1, got 0"):
        make_policy("gammatune", 0)


def test_defaults_and_exact_values_come_from_the_rows():
    p = PolicyParams()
    for s in PARAM_SPECS:
        assert getattr(p, s.name) == s.stored_default
    assert PolicyParams.build(eta="0.1").eta * 10 == 1   # exact, not the nearest double


def test_the_docs_table_is_the_rows():
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- parameter table: generated from engine/policies/param_specs.py -->\n")[1]
    assert block.split("<!-- end of parameter table -->")[0].strip() == parameter_table()


def test_every_row_reaches_the_flags_the_controls_and_the_tune_headers():
    from gammatune_tui.bench.modes.tune import HEADERS
    from gammatune_tui.commands.options import _POLICY_PARAMS, FLAGS
    from gammatune_tui.ui.widgets.controls import FIELDS

    option_flags = {flag for _, _, opt in _POLICY_PARAMS for flag in opt.param_decls}
    shown = {name for name, *_ in FIELDS}
    for s in SPECS:
        assert s.cli_flag in option_flags and FLAGS[s.name] == s.cli_flag
        assert (s.name in shown) == (s.kind is not bool)
        assert s.name in HEADERS or not s.in_params


def test_one_row_per_method_in_its_group_and_each_reads_declared_parameters():
    assert METHODS == tuple(m.name for m in REGISTRY)
    assert [m.name for m in REGISTRY if m.group == "paper"] == [
        "specdecode", "hf-heuristic", "assistant-threshold", "gammatune", "gammatune+"]
    assert method_spec("adaptive-k").group == "peer" and method_spec("costaware").group == "own"
    assert [m.name for m in REGISTRY if m.group == "peer"] == [
        "adaptive-k", "p-min", "adaedl", "svip", "ema-tiers", "ucb"]
    assert set(m.group for m in REGISTRY) <= set(GROUPS)
    assert [m.name for m in REGISTRY if m.stops_early] == ["assistant-threshold", "gammatune+", "p-min", "adaedl",
                                                           "svip", "costaware"]
    assert readers("tau") == ("assistant-threshold", "gammatune+") and readers("gamma0") == ()
    for m in REGISTRY:   # what a method reads, it records (its own parameters even at their defaults)
        assert set(m.reads) <= set(make_policy(m.name, 4).describe())
