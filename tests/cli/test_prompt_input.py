"""The prompt from `-`, a piped stdin or --prompt-file; a prompt that is not UTF-8 is one line (issue 17 rows 1, 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clihelpers import invoke

REPO = Path(__file__).resolve().parents[2]
TEXT = "def add(a, b):\n    return"


def _gammatune(args, **kw):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([sys.executable, "-m", "gammatune_tui", *args], capture_output=True, env=env, cwd=REPO,
                          timeout=120, **kw)


def _user_text(stdout: bytes) -> str:
    return json.loads(stdout.decode().splitlines()[0])["user_text"]


@pytest.fixture()
def prompt_file(tmp_path):
    p = tmp_path / "prompt.txt"
    p.write_text(TEXT + "\n", encoding="utf-8")
    return p


def test_run_dash_reads_a_redirected_file(prompt_file, pair_args):
    with open(prompt_file, "rb") as fh:
        r = _gammatune(["run", "-", *pair_args, "-n", "2", "--json"], stdin=fh)
    assert r.returncode == 0, r.stderr
    assert _user_text(r.stdout) == TEXT   # the text, without its final newline (as "$(cat FILE)" gives it)


def test_run_reads_a_piped_stdin_without_an_argument(pair_args):
    r = _gammatune(["run", *pair_args, "-n", "2", "--json"], input=(TEXT + "\n").encode(), stdin=None)
    assert r.returncode == 0, r.stderr
    assert _user_text(r.stdout) == TEXT and b"demo prompt" not in r.stderr


def test_run_prompt_file(prompt_file, pair_args, capsys):
    code, out, err = invoke(["run", "--prompt-file", str(prompt_file), *pair_args, "-n", "2", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["user_text"] == TEXT


def test_a_terminal_stdin_is_never_read(pair_args):
    master, slave = os.openpty()
    try:
        r = _gammatune(["run", "-", *pair_args, "-n", "2", "--json"], stdin=slave)
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "stdin is a terminal" in err and "--prompt-file" in err


@pytest.mark.parametrize("command", ["run", "compare", "chat"])
def test_a_prompt_that_is_not_utf8_is_one_line(command, capsys, pair_args):
    bad = os.fsdecode(b"caf\xe9 \xff")   # how Python hands over `gammatune run $'caf\xe9 \xff'`
    code, out, err = invoke([command, bad, *pair_args], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("gammatune: error: the prompt is not valid UTF-8 text (byte 0xe9 at character 4)")


@pytest.mark.parametrize("command", ["run", "compare", "chat", "bench"])
def test_a_prompt_file_that_is_not_utf8_names_the_file_and_line(command, capsys, pair_args, tmp_path):
    f = tmp_path / "bin.txt"
    f.write_bytes(b"first line\nsecond \xff\xfe line\n")
    code, out, err = invoke([command, "--prompt-file", str(f), *pair_args], capsys)
    assert code == 2 and out == ""
    assert err == f"gammatune: error: {f}: the prompt is not UTF-8 text (byte 0xff on line 2); give a UTF-8 text prompt\n"


@pytest.mark.parametrize("argv, message", [
    (["run", "hi", "--prompt-file", "F"], "either as an argument or with --prompt-file, not both"),
    (["run", "--prompt-file", "/nonexistent/p.txt"], "--prompt-file /nonexistent/p.txt: no such file"),
    (["compare", "--prompt-file", "EMPTY"], "the prompt read from --prompt-file"),
    (["bench", "--prompts", "code", "--prompt-file", "F"], "not both"),
])
def test_prompt_file_mistakes_are_one_line(argv, message, capsys, pair_args, prompt_file, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    argv = [{"F": str(prompt_file), "EMPTY": str(empty)}.get(a, a) for a in argv]
    code, out, err = invoke([*argv, *pair_args], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_chat_passes_the_prompt_file_to_the_app_as_its_first_message(capsys, pair_args, prompt_file, monkeypatch):
    import gammatune_tui.ui.app as app_mod
    from gammatune_tui.commands import terminal

    seen = {}

    class FakeApp:
        def run(self):
            pass

    def fake_make_app(source, **kw):
        seen.update(kw)
        return FakeApp()

    monkeypatch.setattr(app_mod, "make_app", fake_make_app)
    monkeypatch.setattr(terminal, "stdout_is_terminal", lambda: True)   # the app would draw on a terminal
    code, out, err = invoke(["chat", "-f", str(prompt_file), *pair_args], capsys)
    assert code == 0, err
    assert seen["prompt"] == TEXT


def test_bench_reads_a_prompt_set_from_stdin_and_one_prompt_from_a_file(pair_args, prompt_file, tmp_path):
    line = json.dumps({"id": "mine", "category": "code", "turns": [TEXT]}) + "\n"
    common = [*pair_args, "--methods", "specdecode", "--gammas", "2", "-n", "4", "--no-baselines"]
    r = _gammatune(["bench", "--prompts", "-", *common, "--out", str(tmp_path / "a.json")], input=line.encode(),
                   stdin=None)
    assert r.returncode == 0, r.stderr
    cfg = json.loads((tmp_path / "a.json").read_text())["config"]
    assert cfg["prompts"] == "stdin" and cfg["prompt_ids"] == ["mine"]
    r = _gammatune(["bench", "--prompt-file", str(prompt_file), *common, "--out", str(tmp_path / "b.json")])
    assert r.returncode == 0, r.stderr
    cfg = json.loads((tmp_path / "b.json").read_text())["config"]
    assert cfg["prompts"] == "prompt-file" and cfg["prompt_ids"] == ["prompt.txt"]
