"""`--system TEXT` on run, compare and chat (issue 24 row 15): refused with --raw; left out with a note where no template."""

from __future__ import annotations

import pytest

from clihelpers import invoke


@pytest.mark.parametrize("command", ["run", "compare", "chat"])
def test_system_with_raw_is_one_line_and_exit_2(capsys, pair_args, command):
    code, out, err = invoke([command, "x", *pair_args, "--raw", "--system", "Be brief."], capsys)
    assert code == 2
    assert "--system needs the chat template, and --raw sends the prompt without it" in err
    assert "Traceback" not in err


def test_run_on_a_pair_without_a_template_leaves_the_system_prompt_out_and_says_so(capsys, pair_args):
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "4", "-t", "0", "--system", "Be brief."], capsys)
    assert code == 0, err
    assert "note: the system prompt is left out" in err and "no chat template" in err
    code2, out2, err2 = invoke(["run", "def f(x):", *pair_args, "-n", "4", "-t", "0"], capsys)
    assert out2 == out   # the same text as without it: nothing of it reached the model


def test_the_flag_is_in_each_command_s_help(capsys):
    for command in ("run", "compare", "chat"):
        code, out, _ = invoke([command, "--help"], capsys)
        assert code == 0 and "--system" in out


def test_compare_print_says_the_system_prompt_was_left_out(capsys, pair_args):
    code, out, err = invoke(["compare", "def f(x):", *pair_args, "--methods", "specdecode,gammatune", "-r", "1",
                             "-n", "4", "-t", "0", "--print", "--system", "Be brief."], capsys)
    assert code == 0, err
    assert "note: the system prompt is left out" in err
