"""Wrong flags and flag values: one line on stderr, exit status 2, for every command (no traceback)."""

from __future__ import annotations

import pytest

from gammatune_tui.cli import main


@pytest.mark.parametrize(
    "argv, words",
    [
        (["run", "x", "--gamma", "abc"], "--gamma"),
        (["run", "x", "--no-such-flag"], "--no-such-flag"),
        (["chat", "--threads", "0"], "--threads"),
        (["compare", "--top-k", "-1"], "top_k"),
        (["bench", "--latency", "--ks", "1,4"], "--ks"),
        (["replay"], "FILE"),
        (["no-such-command"], "no-such-command"),
    ],
)
def test_usage_error_is_one_line_exit_2(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gammatune: error:") and words in lines[0]
    assert "Traceback" not in err + out


def test_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    assert "--method" in capsys.readouterr().out
