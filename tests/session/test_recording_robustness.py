"""A recording survives odd token text on the way out and refuses impossible numbers on the way in."""

from __future__ import annotations

import dataclasses

import pytest

from gammatune_tui.engine.events import EmittedToken, StepEvent
from gammatune_tui.errors import RecordingError
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.synthetic import synthetic_session


def test_lone_surrogate_in_token_text_is_written_and_read_back(tmp_path):
    events = list(synthetic_session())
    i = next(k for k, e in enumerate(events) if isinstance(e, StepEvent))
    step = events[i]
    odd = [EmittedToken(id=t.id, text="\ud800" + t.text, source=t.source) for t in step.emitted]
    events[i] = dataclasses.replace(step, emitted=odd)
    path = tmp_path / "odd.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(events)
    back = read_recording(path)
    steps = back.sessions[0].steps
    assert steps[0].emitted[0].text.startswith("\ud800")
    assert len(back.events) == len(events)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_with_file_and_line(tmp_path, constant):
    path = tmp_path / "bad.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(synthetic_session())
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"draft_s": ', f'"draft_s": {constant}, "was": ', 1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"bad\.jsonl: line 2: non-finite number"):
        read_recording(path)


@pytest.mark.parametrize("line", ['{"type": "step", "step": 0}', '{"type": "summary", "tokens": 3}'])
def test_a_line_before_any_header_names_the_real_problem(tmp_path, capsys, line):
    from gammatune_tui.cli import main

    path = tmp_path / "orphan.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path), "--print"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "line 1: a" in err and "before any header line" in err and "missing" not in err
