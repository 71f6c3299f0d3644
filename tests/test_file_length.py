"""The house rule "files under ~400 lines" (docs/architecture.md), held by a test rather than by review.

A module past 400 lines has usually grown a second job: split it by job (bench/report/tables.py
became tables.py, which prints, and files.py, which writes), not by moving lines to a helper. Nothing
is allow-listed: a file over the line fails here, naming itself and its length.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gammatune_tui"
LIMIT = 400


def _long_files(package: Path = PACKAGE) -> dict[str, int]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > LIMIT:
            out[str(path.relative_to(package.parent))] = n
    return out


def test_no_module_of_the_package_is_over_400_lines():
    long = _long_files()
    assert not long, "over the 400-line house rule (split by job): " + ", ".join(f"{p} ({n})" for p, n in long.items())


def test_the_rule_counts_lines_as_an_editor_does(tmp_path):
    """The check itself: 401 lines is over, 400 is not (a trailing newline adds no line)."""
    pkg = tmp_path / "gammatune_tui"
    pkg.mkdir()
    (pkg / "ok.py").write_text("x = 1\n" * LIMIT)
    (pkg / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert _long_files(pkg) == {"gammatune_tui/long.py": LIMIT + 1}
