"""The demo recordings shipped in demo_prompts/recordings/ replay without a model, and were made with
the current defaults (re-record them with `make recordings` when a default changes)."""

from __future__ import annotations

import pytest

from gammatune_tui import __version__
from gammatune_tui.commands.options import default_options
from gammatune_tui.engine.policies import METHODS, PolicyParams
from gammatune_tui.session.compare import runs_from_recording, summarize
from gammatune_tui.session.recording import read_recording, resolve_recording, shipped_recordings
from gammatune_tui.session.replay import is_comparison

SHIPPED = shipped_recordings()


def test_the_demos_are_there():
    names = {p.stem for p in SHIPPED}
    assert {"all-methods", "gammatune-plus", "specdecode", "chat-two-turns"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_each_shipped_recording_is_complete_and_valid(path):
    rec = read_recording(path)
    assert rec.warning == ""
    for s in rec.sessions:
        assert s.header.demo and s.summary is not None and s.steps
        assert sum(len(st.emitted) for st in s.steps) == s.summary.tokens


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_each_shipped_recording_was_made_with_the_current_defaults(path):
    defaults = PolicyParams()
    gamma0 = default_options().gamma
    for s in read_recording(path).sessions:
        h = s.header
        assert h.versions.get("gammatune") == __version__, "re-record with `make recordings`"
        assert h.gamma0 == gamma0
        for name in ("eta", "delta", "tau", "gamma_min", "gamma_max", "ema_alpha", "alpha_prior", "cooldown"):
            if name in h.params:
                assert h.params[name] == pytest.approx(float(getattr(defaults, name))), (
                    f"{path.name}: {h.label or h.method} was recorded with {name}={h.params[name]}, the default is "
                    f"{getattr(defaults, name)}; re-record with `make recordings`")


def test_all_methods_is_a_lossless_ranked_comparison_of_every_method():
    rec = read_recording(resolve_recording("all-methods"))
    assert is_comparison(rec)
    runs = runs_from_recording(rec)
    assert [r.label for r in runs] == list(METHODS)
    summary = summarize(runs)
    assert summary.ranked and summary.runs == 3            # made with compare's default --repeats
    assert summary.lossless.checked and summary.lossless.identical
