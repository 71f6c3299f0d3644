"""`--help` at 100 columns wraps a command's description as paragraphs, not at the source's line breaks (issue 40, row 13).

`compare --help` used to show "the peers'" and "five," alone on their lines:
typer's rich mode kept the docstring's own breaks and the terminal wrapped
each source line again.
"""

from __future__ import annotations

import pytest

from clihelpers import invoke


@pytest.mark.parametrize("command", ["run", "models", "chat", "compare", "replay", "bench", "doctor"])
def test_description_lines_are_not_broken_short(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = invoke([command, "--help"], capsys)
    assert code == 0
    head = out.split("╭")[0]   # the usage and the description, before the first panel
    lines = [ln.strip() for ln in head.splitlines()]
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1]
        if line and nxt and not line.startswith("Usage:") and not nxt.startswith(("-", "*")):
            # a line followed by more of its paragraph must be filled: a short one is a hard break
            assert len(line) > 60, f"{command} --help breaks a paragraph early: {line!r} / {nxt!r}"
