"""`make test` ends each pytest run with its "N passed" line: pyproject's addopts give one -q, and a
second -q on a Makefile line (pytest's -qq) would drop that closing count from CI's log."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quiet_level(args: list[str]) -> int:
    level = 0
    for a in args:
        if a == "--quiet":
            level += 1
        elif re.fullmatch(r"-q+", a):
            level += len(a) - 1
    return level


def test_every_pytest_line_of_the_makefile_keeps_the_closing_count():
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    base = _quiet_level(shlex.split(addopts))
    lines = [ln for ln in (ROOT / "Makefile").read_text().splitlines() if "-m pytest" in ln]
    assert lines, "the Makefile runs pytest"
    for line in lines:
        args = shlex.split(line.split("-m pytest", 1)[1])
        assert base + _quiet_level(args) <= 1, f"pytest at -q{'q' * (base + _quiet_level(args) - 1)} hides 'N passed': {line.strip()}"
