"""`gammatune replay --print`: good, truncated, malformed, binary and hostile recordings."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.cli import main
from gammatune_tui.engine.events import StepEvent
from gammatune_tui.engine.policies import METHODS
from gammatune_tui.session.recording import RecordingWriter
from gammatune_tui.session.synthetic import synthetic_session


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _write(path, *sessions):
    with RecordingWriter(path) as w:
        for s in sessions:
            w.write_all(s)
    return path


def test_print_single_session(tmp_path, capsys):
    events = synthetic_session("gammatune+")
    path = _write(tmp_path / "one.jsonl", events)
    code, out, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 0, err
    text = "".join(t.text for e in events if isinstance(e, StepEvent) for t in e.emitted)
    assert text in out
    assert "Write a Python function" in out
    assert "tok/s" in out and "the model ended its answer" in out and "stopped: " not in out
    assert "\x1b[" not in out  # not a terminal: plain text


def test_print_comparison_has_ranked_summary_and_lossless_line(tmp_path, capsys):
    path = _write(tmp_path / "five.jsonl", *[synthetic_session(m) for m in METHODS])
    code, out, err = run_cli(["replay", str(path), "--print", "--speed", "0"], capsys)
    assert code == 0, err
    for m in METHODS:
        assert m in out
    assert "one run each: not ranked" in out and "lossless: every method produced the same tokens" in out


def test_print_comparison_with_repeats_ranks_beyond_the_spread(tmp_path, capsys):
    sessions = [synthetic_session(m, seed=s) for s in range(3) for m in ("specdecode", "gammatune+")]
    path = _write(tmp_path / "rep.jsonl", *sessions)
    code, out, err = run_cli(["replay", str(path), "--print", "--speed", "0"], capsys)
    assert code == 0, err
    assert "ranked by tokens/s (median of 3 runs)" in out and "spread" in out


def test_several_files_side_by_side_in_print(tmp_path, capsys):
    a = _write(tmp_path / "a.jsonl", synthetic_session("specdecode"))
    b = _write(tmp_path / "b.jsonl", synthetic_session("gammatune+"))
    code, out, err = run_cli(["replay", str(a), str(b), "--print"], capsys)
    assert code == 0, err
    assert "compare: tokens/s" in out and "gammatune+" in out


def test_truncated_recording_warns_once_and_prints_prefix(tmp_path, capsys):
    path = _write(tmp_path / "cut.jsonl", synthetic_session("gammatune"))
    data = path.read_bytes()
    path.write_bytes(data[:-30])  # the summary line is cut mid-way
    code, out, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "warning" in lines[0] and "cut off" in lines[0] and "cut.jsonl" in lines[0]
    assert "cut off (no summary)" in out


BAD = {
    "binary.jsonl": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "line 1"),
    "garbage.jsonl": (b'{"type": "header", "schema": 1, ...\n{"x": 1}\n', "line 1"),
    "schema.jsonl": (json.dumps({**synthetic_session("specdecode")[0].to_json(), "schema": 99}).encode() + b"\n", "unknown schema 99"),
    "type.jsonl": (b'{"type": "exec", "code": "import os"}\n', "unknown event type"),
    "nohdr.jsonl": (json.dumps(synthetic_session("specdecode")[1].to_json()).encode() + b"\n", "before any header"),
    "empty.jsonl": (b"", "no session"),
    "array.jsonl": (b"[1, 2, 3]\n", "JSON object"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_recordings_give_one_line_naming_file_and_line(tmp_path, capsys, name):
    data, expected = BAD[name]
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gammatune: error: ") and name in lines[0] and expected in lines[0]
    assert "Traceback" not in err and out == ""


def test_bad_line_in_the_middle_names_that_line(tmp_path, capsys):
    events = synthetic_session("specdecode", max_new_tokens=12)
    lines = [json.dumps(e.to_json()) for e in events]
    step = json.loads(lines[2])
    step["accepted"] = 99  # more accepted than drafted: impossible
    lines[2] = json.dumps(step)
    path = tmp_path / "impossible.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 2 and "line 3" in err and "accepted" in err


def test_missing_file_and_bad_speed(tmp_path, capsys):
    code, _, err = run_cli(["replay", str(tmp_path / "nope.jsonl"), "--print"], capsys)
    assert code == 2 and "nope.jsonl" in err and len(err.strip().splitlines()) == 1
    path = _write(tmp_path / "ok.jsonl", synthetic_session("specdecode"))
    code, _, err = run_cli(["replay", str(path), "--speed", "-1", "--print"], capsys)
    assert code == 2 and "speed" in err


HOSTILE = "\x1b[31mRED\x1b[0m [bold red]markup[/] \x1b]0;pwned\x07 \r\x08\x9b2J \u202eevil \ud800"


def test_hostile_token_text_never_reaches_the_terminal_raw(tmp_path, capsys):
    events = synthetic_session("specdecode", text="ok " + HOSTILE + " end\n", prompt="p\x1b[2J")
    path = tmp_path / "hostile.jsonl"
    # ASCII-escaped JSON, so the file can smuggle a lone surrogate ("\\ud800") in
    path.write_text("".join(json.dumps(e.to_json()) + "\n" for e in events))
    code, out, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 0, err
    for raw in ("\x1b", "\x07", "\r", "\x08", "\x9b", "\u202e"):
        assert raw not in out, repr(raw)
    assert "\\x1b[31mRED" in out          # shown literally, escaped
    assert "[bold red]markup[/]" in out   # Rich markup shown as text, not interpreted
    assert "\\u202e" in out and "\\ud800" in out


def test_hostile_text_escaped_in_coloured_output_too(tmp_path):
    import io

    from gammatune_tui.session.compare import MethodRun
    from gammatune_tui.render.printer import make_console, print_runs

    buf = io.StringIO()
    console = make_console(buf, color=True, width=100)
    print_runs(console, [MethodRun.from_events(synthetic_session("specdecode", text=HOSTILE))], compare=False)
    out = buf.getvalue()
    assert "\x1b[" in out                 # colours are on ...
    assert "\x1b[31mRED" not in out and "\x07" not in out and "\r" not in out  # ... but never the token's own
    import re

    assert not re.findall("\x1b(?!\\[[0-9;]*m)", out)  # every ESC is one of Rich's colour codes
    plain = re.sub("\x1b\\[[0-9;]*m", "", out)
    assert "\\x1b[31mRED" in plain and "[bold red]markup[/]" in plain


def test_print_on_a_terminal_streams_at_pace_with_the_same_text(tmp_path, capsys, monkeypatch):
    import io
    import re

    import gammatune_tui.render.printer as printer

    buf = io.StringIO()
    monkeypatch.setattr(printer, "make_console", lambda *a, **k: printer.Console(
        file=buf, force_terminal=True, width=100, highlight=False, markup=False, emoji=False, soft_wrap=True))
    events = synthetic_session("gammatune+", text="hi \x1b[2J there\n")
    path = _write(tmp_path / "tty.jsonl", events)
    code, _, err = run_cli(["replay", str(path), "--print", "--speed", "1000"], capsys)
    assert code == 0, err
    plain = re.sub("\x1b\\[[0-9;]*m", "", buf.getvalue())
    assert "\x1b[2J" not in buf.getvalue()
    assert "hi \\x1b[2J there" in plain and "the model ended its answer" in " ".join(plain.split())


def test_huge_timings_do_not_break_replay(tmp_path, capsys):
    events = synthetic_session("specdecode", max_new_tokens=20)
    lines = [json.dumps(e.to_json()) for e in events]
    lines[1] = lines[1].replace('"elapsed_s": ', '"elapsed_s": 1e308, "x": ', 1)
    lines[2] = lines[2].replace('"step_s": ', '"step_s": 1e300, "y": ', 1)
    lines[3] = lines[3].replace('"elapsed_s": ', '"elapsed_s": -5, "z": ', 1)
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines) + "\n")
    from gammatune_tui.engine.events import event_from_json
    from gammatune_tui.session.pacing import MAX_STEP_WAIT_S, schedule, step_durations

    evs = [event_from_json(json.loads(line)) for line in lines]   # the player copes with any timings
    assert all(d >= 0 and d != float("inf") for d in step_durations(evs))
    assert schedule(evs)[-1] <= MAX_STEP_WAIT_S * len(evs)
    # and `replay` refuses such a file: elapsed time that goes backwards is not a session (issue 17 row 14)
    code, out, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert "line 3: elapsed time goes backwards" in err


def test_non_finite_timings_are_an_impossible_value(tmp_path, capsys):
    events = synthetic_session("specdecode", max_new_tokens=20)
    lines = [json.dumps(e.to_json()) for e in events]
    lines[2] = lines[2].replace('"step_s": ', '"step_s": NaN, "y": ', 1)
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(["replay", str(path), "--print"], capsys)
    assert code == 2
    assert err.strip().count("\n") == 0 and "line 3" in err and "non-finite" in err
