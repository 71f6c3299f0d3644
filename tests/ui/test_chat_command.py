"""`gammatune chat` argument handling: every user mistake is one line and exit status 2 (no app started)."""

from __future__ import annotations

import pytest

from gammatune_tui import cli


def _run(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    return exc.value.code, capsys.readouterr().err


def test_missing_demo_pair_says_how_to_pass_one(monkeypatch, tmp_path, capsys):
    from gammatune_tui import resources

    monkeypatch.setattr(resources, "demo_pair_dir", lambda: tmp_path / "no-pair")
    code, err = _run(["chat"], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "demo pair is not installed" in err and "--target" in err and "--pair" in err


@pytest.mark.parametrize("argv, message", [
    (["chat", "--eta", "1.5"], "eta must be in (0, 1]"),
    (["chat", "--method", "fast"], "unknown method 'fast'"),
    (["chat", "--theme", "nope", "--target", "t", "--draft", "d"], "unknown theme 'nope'"),
    (["chat", "--record", "/nonexistent-dir/x.jsonl", "--target", "t", "--draft", "d"], "cannot write recording"),
])
def test_bad_options_are_one_line_errors(argv, message, capsys):
    code, err = _run(argv, capsys)
    assert code == 2 and err.startswith("gammatune: error: ") and message in err and err.count("\n") == 1
