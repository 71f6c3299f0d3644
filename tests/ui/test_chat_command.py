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
    (["chat", "--theme", "nope", "PAIR"], "unknown theme 'nope'"),
    (["chat", "--record", "/nonexistent-dir/x.jsonl", "PAIR"], "cannot write the recording there"),
    (["chat", "--pace", "-1"], "--pace"),
    (["chat", "-n", "0"], "--max-new-tokens must be a whole number >= 1"),
])
def test_bad_options_are_one_line_errors(argv, message, capsys, tiny_pair_dirs):
    t, d = tiny_pair_dirs
    argv = [a for x in argv for a in (["--target", str(t), "--draft", str(d)] if x == "PAIR" else [x])]
    code, err = _run(argv, capsys)
    assert code == 2 and err.startswith("gammatune: error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["--target", "/nope", "--draft", "/nope"], "target model '/nope': no such directory"),
    (["--target", "TARGET", "--draft", "/nope/draft"], "draft model '/nope/draft': no such directory"),
    (["--target", "EMPTY", "--draft", "EMPTY"], "no config.json"),
    (["--target", "TARGET"], "give both --target and --draft"),
    (["--pair", "nope"], "unknown pair 'nope'"),
    (["--target", "not-cached/model-xyz", "--draft", "not-cached/model-xyz"], "not in the local Hugging Face cache"),
])
def test_model_arguments_are_checked_before_the_app_opens(argv, message, capsys, tiny_pair_dirs, tmp_path,
                                                          monkeypatch):
    """`chat --target /nope --draft /nope` fails in one line, exit 2, as `run` does: the app never starts."""
    from gammatune_tui.ui.app import GammaTuneApp

    monkeypatch.setattr(GammaTuneApp, "run", lambda self, *a, **k: pytest.fail("the app was started"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "empty").mkdir()
    subst = {"TARGET": str(tiny_pair_dirs[0]), "EMPTY": str(tmp_path / "empty")}
    code, err = _run(["chat", *[subst.get(a, a) for a in argv]], capsys)
    assert code == 2 and err.startswith("gammatune: error: ") and err.count("\n") == 1
    assert message in err
