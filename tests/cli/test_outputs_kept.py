"""What a command was asked to write is checked before the work and never lost after it.

A bench whose --out folder is missing, an output that is the user's own
input, --threads past the machine, a full disk, a reader that closes the
pipe early: each is one line and exit status 2 before any work (or, for
the pipe, a normal exit with the files written).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clihelpers import assert_one_line, invoke

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [
    ["bench", "--out", "/nonexistent-gt/x.json"],
    ["bench", "--latency", "--out", "/nonexistent-gt/x.json"],
    ["doctor", "--json", "/nonexistent-gt/x.json"],
    ["run", "x", "--record", "/nonexistent-gt/x.jsonl"],
    ["compare", "--print", "--record", "/nonexistent-gt/x.jsonl"],
])
def test_an_output_in_a_missing_folder_is_refused_before_any_work(argv, capsys, monkeypatch):
    import importlib

    def never(*a, **k):
        raise AssertionError("loaded a model before refusing the output path")

    # every module imported before any is patched: one imported under the patch would keep `never` for good
    mods = [importlib.import_module(f"gammatune_tui.{m}") for m in
            ("engine.loading.models", "bench.modes.sweep", "bench.doctor.examine", "session.compare_job")]
    for mod in mods:
        monkeypatch.setattr(mod, "load_pair", never)
    monkeypatch.setattr(importlib.import_module("gammatune_tui.bench.modes.latency"), "_measure", never)
    code, out, err = invoke(argv, capsys)
    assert_one_line(code, err, "/nonexistent-gt", "does not exist")
    assert not Path("/nonexistent-gt").exists()   # doctor used to create the folder


def test_an_output_that_is_an_input_is_refused(tmp_path, capsys):
    prompts = tmp_path / "mine.jsonl"
    prompts.write_text('{"id": "a", "turns": ["def f(x):"]}\n')
    before = prompts.read_text()
    code, _, err = invoke(["bench", "--prompts", str(prompts), "--out", str(prompts)], capsys)
    assert_one_line(code, err, "--prompts", "input")
    p = tmp_path / "p.txt"
    p.write_text("def f(x):")
    code, _, err = invoke(["run", "--prompt-file", str(p), "--record", str(p), "-n", "2"], capsys)
    assert_one_line(code, err, "--prompt-file")
    assert p.read_text() == "def f(x):" and prompts.read_text() == before


def test_a_csv_named_out_is_refused(tmp_path, capsys):
    code, _, err = invoke(["bench", "--out", str(tmp_path / "x.csv")], capsys)
    assert_one_line(code, err, "--out", "CSV")


@pytest.mark.parametrize("latency", [[], ["--latency"]])
def test_a_folder_as_out_isassert_one_line(latency, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(["bench", *latency, "--out", "."], capsys)
    assert_one_line(code, err, "--out", "directory")


def test_a_replaced_record_file_is_said(tmp_path, capsys, pair_args):
    rec = tmp_path / "old.jsonl"
    rec.write_text("my earlier recording\n")
    code, _, err = invoke(["run", "def f(x):", *pair_args, "-n", "2", "--json", "--record", str(rec)], capsys)
    assert code == 0, err
    assert f"{rec} exists and will be replaced" in err


@pytest.mark.parametrize("value", ["100000", "99999999999999999999"])
def test_threads_above_the_cores_isassert_one_line(value, capsys):
    code, _, err = invoke(["run", "x", "--threads", value], capsys)
    assert_one_line(code, err, "--threads", "core")
    code, _, err = invoke(["doctor", "--threads", value], capsys)
    assert_one_line(code, err, "--threads")


def test_a_full_disk_under_record_is_one_line_and_keeps_stdout(capsys, pair_args):
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "4", "--json", "--record", "/dev/full"], capsys)
    assert_one_line(code, err, "/dev/full", "No space left")


def test_a_full_stdout_isassert_one_line(pair_args, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "gammatune_tui", "run", "def f(x):", *pair_args, "-n", "4",
                               "--json"], stdout=full, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
                              cwd=tmp_path, timeout=300, text=True)
    assert_one_line(proc.returncode, proc.stderr, "No space left")


def test_bench_into_a_closed_pipe_still_writes_its_files(tmp_path):
    """`gammatune bench … --out x.json | head -1`: the reader leaves, the JSON and CSV are written anyway."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    out = tmp_path / "x.json"
    r, w = os.pipe()
    os.close(r)   # the reader is gone before the tables come, as `| head -1` leaves it
    try:
        proc = subprocess.run([sys.executable, "-m", "gammatune_tui", "bench", "--limit", "1", "-n", "4",
                               "--methods", "specdecode", "--gammas", "1,2", "--no-baselines", "--device", "cpu",
                               "--out", str(out)], stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              env=env, cwd=tmp_path, timeout=300, text=True)
    finally:
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(out.read_text())["live"]["records"]
    assert out.with_suffix(".csv").read_text().startswith("kind,method")
