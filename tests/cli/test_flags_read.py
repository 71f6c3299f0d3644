"""A flag the chosen method or drafter does not read is refused, naming what it belongs to (issue 40, row 11).

`run -m specdecode --eta 0.5` and `run --ngram-min 2` with the draft model
used to run as if the flag were not there, so the user believed it changed
something.
"""

from __future__ import annotations

import pytest

from clihelpers import assert_one_line, invoke


@pytest.mark.parametrize("argv,words", [
    (["run", "x", "--method", "specdecode", "--eta", "0.5"], ["--eta", "gammatune+", "specdecode"]),
    (["run", "x", "-m", "specdecode", "--delta", "2"], ["--delta", "gammatune"]),
    (["run", "x", "-m", "gammatune", "--tau", "0.2"], ["--tau", "assistant-threshold"]),
    (["run", "x", "-m", "adaedl", "--p-min", "0.3"], ["--p-min", "p-min"]),
    (["run", "x", "--ngram-min", "2"], ["--ngram-min", "prompt-lookup", "model"]),
    (["run", "x", "--draft", "self:int8", "--ngram-max", "4"], ["--ngram-max", "prompt-lookup"]),
    (["compare", "x", "--print", "--methods", "specdecode,hf-heuristic", "--eta", "0.5"],
     ["--eta", "none of specdecode, hf-heuristic"]),
    (["compare", "x", "--print", "--drafters", "model,self:int8", "--ngram-max", "4"],
     ["--ngram-max", "--drafters"]),
])
def test_a_flag_nothing_reads_is_refused(argv, words, capsys):
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, "belongs to", *words)


def test_a_flag_one_contestant_reads_is_taken(capsys):
    code, out, err = invoke(["compare", "x", "--print", "--methods", "specdecode,gammatune", "--eta", "0.5",
                             "-n", "2", "-r", "1", "-t", "0"], capsys)
    assert code in (0, None), err


def test_a_drafter_flag_its_drafter_reads_is_taken(capsys):
    code, out, err = invoke(["run", "x", "--drafter", "prompt-lookup", "--ngram-min", "2", "-n", "2", "-t", "0"],
                            capsys)
    assert code in (0, None), err


def test_model_and_its_self_draft_are_not_raced_as_two(capsys):
    code, _, err = invoke(["compare", "x", "--print", "--draft", "self:int8", "--drafters", "model,self:int8"], capsys)
    assert_one_line(code, err, "one drafter")


def test_an_empty_drafters_list_is_refused(capsys):
    """Round 6 trial: `compare --drafters ""` ran the whole default race as if the flag were absent."""
    code, _, err = invoke(["compare", "x", "--print", "--drafters", ""], capsys)
    assert_one_line(code, err, "--drafters")
