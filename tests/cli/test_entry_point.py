"""The console script: a Ctrl+C while the CLI is still being imported is one line and 130, not a traceback."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_points_at_the_guarded_entry_point():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["gammatune"] == "gammatune_tui.__main__:main"


class _ImportInterrupted:
    """Stands in for gammatune_tui.cli: the Ctrl+C arrives while `from .cli import main` runs."""

    def __getattr__(self, name):
        raise KeyboardInterrupt


def test_ctrl_c_during_the_cli_import_is_one_line_and_130(monkeypatch, capsys):
    from gammatune_tui import __main__ as entry

    monkeypatch.setitem(sys.modules, "gammatune_tui.cli", _ImportInterrupted())
    with pytest.raises(SystemExit) as info:
        entry.main(["models"])
    out, err = capsys.readouterr()
    assert info.value.code == 130
    assert err == "gammatune: interrupted\n" and out == ""


def test_the_entry_point_runs_the_command(capsys):
    from gammatune_tui import __main__ as entry

    with pytest.raises(SystemExit) as info:
        entry.main(["models", "--json"])
    out, _ = capsys.readouterr()
    assert info.value.code == 0 and '"presets"' in out


CHILD = r"""
import importlib.abc, signal, sys, time

# as in a terminal: a job started in the background (CI under nohup, `cmd &`) inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)

class Slow(importlib.abc.MetaPathFinder):
    # makes the CLI's own import last long enough for a real SIGINT to land inside it
    def find_spec(self, name, path, target=None):
        if name == "gammatune_tui.cli":
            print("importing", flush=True)
            time.sleep(60)
        return None

sys.meta_path.insert(0, Slow())
from gammatune_tui.__main__ import main
main(["models"])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_real_sigint_during_the_cli_import_is_one_line_and_130():
    """The process as a user's shell runs it: a SIGINT while `from .cli import main` runs."""
    import os
    import signal
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "importing"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err == "gammatune: interrupted\n" and "Traceback" not in err
