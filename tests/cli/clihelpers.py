"""What the CLI tests share: run `gammatune` in-process and get (exit status, stdout, stderr)."""

from __future__ import annotations

import pytest

from gammatune_tui import cli


def invoke(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


def assert_one_line(code, err, *words):
    """A user error as the CLI must say it: exit status 2 and one `gammatune: error:` line holding `words`."""
    assert code == 2, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gammatune: error:"), err
    for w in words:
        assert w in lines[0], err
