"""--tune recommends its settings only when they also win on prompts they were not tuned on."""

from __future__ import annotations

from gammatune_tui.bench.modes.tune import recommend
from gammatune_tui.bench.sim.tune import Score, current_defaults


def _score(value, **changes):
    return Score({**current_defaults(), **changes}, value, 0.0, value)


def _held(tuned, default):
    return {"held_out_tuned": {"score": tuned}, "held_out_defaults": {"score": default}}


def test_tuned_settings_that_lose_held_out_are_not_recommended():
    r = recommend("gammatune+", _score(1.45, eta=0.9, tau=0.1), _score(1.40), _held(1.384, 1.399))
    assert r.kind == "defaults" and r.params == current_defaults() and r.flags == ""
    assert "loses on its own held-out check" in r.line and "1.384" in r.line and "1.399" in r.line


def test_tuned_settings_that_win_held_out_are_recommended_with_their_flags():
    r = recommend("gammatune+", _score(1.45, eta=0.9, tau=0.1), _score(1.40), _held(1.42, 1.39))
    assert r.kind == "tuned" and r.params["eta"] == 0.9
    assert "--eta 0.9" in r.flags and "--tau 0.1" in r.flags and r.flags in r.line


def test_without_a_held_out_check_the_recommendation_says_it_is_unchecked():
    r = recommend("gammatune+", _score(1.45, delta=4), _score(1.40), None)
    assert r.kind == "unchecked" and "--delta 4" in r.line and "unchecked" in r.line


def test_when_the_defaults_are_best_they_are_recommended():
    r = recommend("adaptive-k", _score(1.40), _score(1.40), _held(1.0, 1.0))
    assert r.kind == "defaults" and "the defaults" in r.line
