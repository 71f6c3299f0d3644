"""`--help`, `models` and a mistyped flag load no torch, transformers or Textual (issue 17 row 15).

Importing torch and transformers costs seconds on a laptop; a user asking
for help or making a typo should not wait for them. Not a timed test: a
fresh interpreter runs the commands and reports which heavy packages ended
up in `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "textual")

PROBE = r"""
import contextlib, io, json, sys
from gammatune_tui.cli import main
codes = {}
for argv in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit as exc:
            codes[" ".join(argv)] = exc.code
print(json.dumps({"codes": codes, "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def _probe(argvs: list[list[str]]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argvs)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


COMMANDS = ["run", "chat", "compare", "replay", "bench", "doctor", "models"]


def test_help_of_every_command_imports_no_torch_transformers_or_textual():
    got = _probe([["--help"]] + [[c, "--help"] for c in COMMANDS])
    assert set(got["codes"].values()) == {0}
    assert got["heavy"] == []


def test_models_imports_no_torch():
    got = _probe([["models"], ["models", "--json"], ["models", "--families"], ["models", "--families", "--json"]])
    assert set(got["codes"].values()) == {0}
    assert got["heavy"] == []


@pytest.mark.parametrize("argv", [
    ["run", "--bogus"], ["compare", "--repeats", "x"], ["bench", "--limit", "0"], ["doctor", "--nope"],
    ["chat", "--pace", "-1"], ["replay"], ["frobnicate"],
    ["compare", "x", "--pair", "smollm2", "--drafters", "model,prompt-lookup"],
])
def test_a_usage_error_imports_no_torch(argv):
    got = _probe([argv])
    assert list(got["codes"].values()) == [2]
    assert got["heavy"] == []


@pytest.mark.parametrize("argv", [["run", "x", "--gamma", "0"], ["run", "x", "--eta", "2"], ["run", "x", "-n", "0"]])
def test_a_bad_policy_value_is_refused_before_torch_loads(argv):
    got = _probe([argv])
    assert list(got["codes"].values()) == [2]
    assert got["heavy"] == []


@pytest.mark.parametrize("argv", [["run", "x", "--top-p", "0"], ["run", "x", "--temperature", "-1"],
                                  ["compare", "x", "--top-k", "-1"], ["chat", "--top-p", "1.5"],
                                  ["bench", "--temperature", "-1"]])
def test_a_bad_sampling_value_is_refused_before_torch_loads(argv):
    got = _probe([argv])
    assert list(got["codes"].values()) == [2]
    assert got["heavy"] == []
