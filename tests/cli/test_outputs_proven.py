"""Every output path is proven by opening it for writing before any model loads (issue 40, rows 3 and 12c).

A folder can pass every permission check and still refuse a new file
(/proc, a read-only mount): `compare --json /proc/x.json` used to run the
whole race and then die in a FileNotFoundError traceback with nothing
saved. Now each command opens the file first, in one line and exit 2, and
an empty name is called empty, not "a directory".
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from clihelpers import assert_one_line, invoke
from gammatune_tui.commands.output_paths import check_output, check_output_dir

UNCREATABLE = "/proc/gammatune-x.json"   # /proc exists, and root may "write" it, but no file can be made there


def _no_work(monkeypatch):
    def never(*a, **k):
        raise AssertionError("loaded a model before refusing the output path")

    mods = [importlib.import_module(f"gammatune_tui.{m}") for m in
            ("engine.loading.models", "bench.modes.sweep", "bench.doctor.examine", "session.compare_job")]
    for mod in mods:
        monkeypatch.setattr(mod, "load_pair", never)
    monkeypatch.setattr(importlib.import_module("gammatune_tui.bench.modes.latency"), "_measure", never)


@pytest.mark.parametrize("argv", [
    ["compare", "x", "--print", "-n", "8", "-r", "1", "--json", UNCREATABLE],
    ["compare", "x", "--print", "-n", "8", "-r", "1", "--record", UNCREATABLE],
    ["bench", "--simulate", "--out", UNCREATABLE],
    ["bench", "--simulate", "--traces", UNCREATABLE],
    ["bench", "--out", UNCREATABLE],
    ["bench", "--latency", "--out", UNCREATABLE],
    ["doctor", "--json", UNCREATABLE],
    ["run", "x", "--record", UNCREATABLE],
    ["chat", "x", "--record", UNCREATABLE],
    ["chat", "x", "--export-dir", "/proc/gammatune-exports"],
])
def test_an_output_no_file_can_be_made_in_is_refused_before_any_work(argv, capsys, monkeypatch):
    _no_work(monkeypatch)
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, argv[argv.index(next(a for a in argv if a.startswith("/proc")))- 1], "cannot")


@pytest.mark.parametrize("argv", [
    ["run", "x", "--record", ""],
    ["compare", "x", "--json", ""],
    ["compare", "x", "--record", ""],
    ["chat", "x", "--record", ""],
    ["doctor", "--json", ""],
    ["bench", "--out", ""],
    ["bench", "--simulate", "--traces", ""],
    ["replay", ""],
])
def test_an_empty_output_name_is_called_empty(argv, capsys, monkeypatch):
    _no_work(monkeypatch)
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, "empty")
    assert "directory" not in err


def test_the_probe_leaves_nothing_behind(tmp_path):
    new = tmp_path / "new.json"
    assert check_output(new, "--json") is False
    assert not new.exists()
    old = tmp_path / "old.json"
    old.write_text("kept")
    assert check_output(old, "--json") is True
    assert old.read_text() == "kept"
    check_output_dir(tmp_path / "a" / "b", "--export-dir")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]


def test_an_export_dir_under_a_file_is_refused(tmp_path, capsys, monkeypatch):
    f = tmp_path / "f"
    f.write_text("")
    _no_work(monkeypatch)
    code, _, err = invoke(["chat", "x", "--export-dir", str(f / "sub")], capsys)
    assert_one_line(code, err, "--export-dir", "not a folder")


@pytest.mark.parametrize("doc,named", [
    ({"prompt": "x", "lossless": {}, "contestants": []}, "compare --json"),
    ({"schema": 1, "command": ["gammatune", "doctor"], "complete": True}, "doctor --json"),
    ({"schema": 1, "command": ["gammatune", "bench", "--simulate"]}, "bench --out"),
])
def test_replay_of_a_json_report_names_it(doc, named, tmp_path, capsys):
    import json

    f = tmp_path / "report.json"
    f.write_text(json.dumps(doc, indent=1) + "\n")
    code, _, err = invoke(["replay", str(f), "--print"], capsys)
    assert_one_line(code, err, named, "not a recording", "--record")
    assert "not valid JSON" not in err


@pytest.mark.parametrize("argv", [
    ["run", "--prompt-file", "", "-n", "2"],
    ["bench", "--prompt-file", ""],
    ["doctor", "--server-log", ""],
])
def test_an_empty_input_name_is_called_empty(argv, capsys, monkeypatch):
    """Round 6 trial: `--prompt-file ""` said ".: is a directory", `--server-log ""` ". is a directory"."""
    _no_work(monkeypatch)
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, "empty")
