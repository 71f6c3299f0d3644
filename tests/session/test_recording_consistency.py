"""Replay refuses a recording whose lines contradict each other, naming the file and line (issue 17 row 14)."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.errors import RecordingError
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.synthetic import synthetic_session


def _lines(tmp_path):
    path = tmp_path / "s.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(synthetic_session("gammatune+", seed=3))
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def _mid_step(objs):
    """Index of a step in the middle that accepted at least one token."""
    steps = [i for i, o in enumerate(objs) if o["type"] == "step"]
    return next(i for i in steps[1:-1] if objs[i]["accepted"] >= 1)


def test_a_well_formed_session_and_an_interrupted_one_are_accepted(tmp_path):
    path, objs = _lines(tmp_path)
    assert read_recording(path).sessions[0].summary is not None
    cut = objs[:-1]   # Ctrl+C: no summary line
    cut[-1]["emitted"] = cut[-1]["emitted"][:1]   # and a last step that stopped early
    assert read_recording(_write(tmp_path / "cut.jsonl", cut)).sessions[0].summary is None


def test_repeated_steps_are_refused(tmp_path):
    """The issue's hand-edited file: one step pasted over and over, replayed at an impossible speed."""
    path, objs = _lines(tmp_path)
    steps = [o for o in objs if o["type"] == "step"]
    padded = [objs[0], *steps, *[steps[-1]] * 50, objs[-1]]
    with pytest.raises(RecordingError, match=rf"pad\.jsonl: line {len(steps) + 2}: step {steps[-1]['step']} where "
                                            rf"step {len(steps)} belongs"):
        read_recording(_write(tmp_path / "pad.jsonl", padded))


@pytest.mark.parametrize("edit, message", [
    ("emitted", "emits 1 tokens after accepting"),
    ("elapsed", "elapsed time goes backwards"),
    ("tokens", "the summary counts 999 tokens"),
    ("steps", "the summary counts 1 steps"),
    ("rate", "tokens/s is not its"),
])
def test_contradictions_are_refused_with_file_and_line(tmp_path, edit, message):
    path, objs = _lines(tmp_path)
    i = _mid_step(objs)
    line = i + 1
    if edit == "emitted":
        objs[i]["emitted"] = objs[i]["emitted"][:1]
    elif edit == "elapsed":
        objs[i + 1]["elapsed_s"] = objs[i]["elapsed_s"] / 2 - 0.01
        line = i + 2
    else:
        line = len(objs)
        key, value = {"tokens": ("tokens", 999), "steps": ("steps", 1),
                      "rate": ("tokens_per_s", objs[-1]["tokens_per_s"] * 1000)}[edit]
        objs[-1][key] = value
    bad = _write(tmp_path / "bad.jsonl", objs)
    with pytest.raises(RecordingError, match=rf"bad\.jsonl: line {line}: .*{message}"):
        read_recording(bad)


def test_replay_of_a_broken_recording_is_one_line_and_exit_2(tmp_path, capsys):
    path, objs = _lines(tmp_path)
    objs[-1]["tokens"] = 999
    bad = _write(tmp_path / "edited.jsonl", objs)
    from gammatune_tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["replay", str(bad), "--print"])
    code = exc.value.code
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"gammatune: error: {bad}: line {len(objs)}: the summary counts")
