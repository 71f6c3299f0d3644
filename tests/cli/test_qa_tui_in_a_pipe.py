"""compare and replay with stdout in a pipe or a file print their results instead of starting the app.

Found as a newcomer: `gammatune replay all-methods | head` and `gammatune
compare "class Stack:" … | tail` filled the pipe with the app's escape codes
and never ended (the race waits for a key); compare ran 10 minutes before
it was killed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _piped(args, tmp_path, timeout=120):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "gammatune_tui", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path,
                          timeout=timeout, text=True)


def test_replay_into_a_pipe_prints_the_race_and_ends(tmp_path):
    proc = _piped(["replay", "all-methods", "--speed", "0"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[?1049h" not in proc.stdout   # no alternate screen: the app did not start
    assert "ranked by tokens/s" in proc.stdout and "costaware" in proc.stdout
    assert "stdout is not a terminal" in proc.stderr


def test_compare_into_a_pipe_measures_prints_and_ends(tmp_path):
    proc = _piped(["compare", "def f(x):", "--methods", "specdecode,gammatune", "-n", "8", "-t", "0",
                   "--repeats", "1"], tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[?1049h" not in proc.stdout
    assert "compare: tokens/s" in proc.stdout and "lossless" in proc.stdout


def test_chat_into_a_pipe_is_one_line_and_exit_2(tmp_path):
    """`gammatune chat > out.txt` drew the app into the file and waited for keys forever."""
    proc = _piped(["chat"], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "stdout is not one" in proc.stderr and "gammatune run" in proc.stderr
