"""`--engine` on the shared model options: a bad value or an impossible runner is one line and exit 2."""

from __future__ import annotations

import json

import pytest

from gammatune_tui import cli
from clihelpers import invoke


@pytest.mark.parametrize("argv, words", [
    (["run", "x", "--engine", "turbo"], "unknown engine 'turbo'; expected one of auto, eager, static, graphs"),
    (["run", "x", "--engine", "graph-body"], "unknown engine 'graph-body'"),
    (["run", "x", "--engine", "graphs", "--device", "cpu"], "--engine graphs: CUDA graphs need a CUDA device"),
    (["compare", "--engine", "turbo"], "unknown engine 'turbo'"),
    (["chat", "--engine", "graphs", "--device", "cpu"], "--engine graphs: CUDA graphs need a CUDA device"),
])
def test_bad_or_impossible_engine_is_one_line_exit_2(argv, words, capsys, pair_args):
    code, out, err = invoke([*argv, *[a for a in pair_args if a not in ("--device", "cpu")]], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gammatune: error:") and words in lines[0]
    assert "Traceback" not in out + err


@pytest.mark.parametrize("engine", ["static", "eager"])
def test_run_with_an_engine_names_it_in_the_header(engine, capsys, pair_args):
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "8", "--raw", "--json", "--engine", engine,
                             "-t", "0"], capsys)
    assert code == 0, err
    header = json.loads(out.splitlines()[0])
    assert header["engine"] == engine and header["runner"] == engine and header["warmup_s"] > 0


def test_every_model_command_offers_engine(capsys):
    for command in ("run", "chat", "compare", "bench"):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        assert "--engine" in capsys.readouterr().out
