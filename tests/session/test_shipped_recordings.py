"""The demo recordings shipped in demo_prompts/recordings/ replay without a model."""

from __future__ import annotations

import pytest

from gammatune_tui.session.compare import runs_from_recording, summarize
from gammatune_tui.session.recording import read_recording, resolve_recording, shipped_recordings
from gammatune_tui.session.replay import is_comparison

SHIPPED = shipped_recordings()


def test_the_demos_are_there():
    names = {p.stem for p in SHIPPED}
    assert {"five-methods", "gammatune-plus", "specdecode"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_each_shipped_recording_is_complete_and_valid(path):
    rec = read_recording(path)
    assert rec.warning == ""
    for s in rec.sessions:
        assert s.header.demo and s.summary is not None and s.steps
        assert sum(len(st.emitted) for st in s.steps) == s.summary.tokens


def test_five_methods_is_a_lossless_five_way_comparison():
    rec = read_recording(resolve_recording("five-methods"))
    assert is_comparison(rec)
    # the paper's five, as recorded when the file was made (adaptive-k came later)
    assert [s.header.label for s in rec.sessions] == ["specdecode", "hf-heuristic", "assistant-threshold",
                                                      "gammatune", "gammatune+"]
    summary = summarize(runs_from_recording(rec))
    assert summary.lossless.checked and summary.lossless.identical
