"""Bad input to `gammatune bench` gives one line on stderr and exit status 2, before any model loads."""

from __future__ import annotations

import pytest

from gammatune_tui.cli import main
from gammatune_tui.bench.args import parse_gammas
from gammatune_tui.engine.policies import parse_methods
from gammatune_tui.errors import InvalidParameter


def _run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(["bench", *argv])
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


@pytest.mark.parametrize("argv,needle", [
    (["--gammas", "1,2,x"], "--gammas"),
    (["--gammas", "4,,8"], "--gammas"),
    (["--gammas", "0,1"], "--gammas"),
    (["--gammas", "2,2"], "twice"),
    (["--methods", "specdecode,warp-drive"], "unknown method 'warp-drive'"),
    (["--prompts", "/nonexistent/prompts.jsonl"], "no such prompt file"),
    (["--prompts", "no-such-set"], "no prompt file"),
    (["--eta", "1.5"], "eta"),
    (["--ema-alpha", "0"], "--ema-alpha"),      # the flag's name, not the engine's (issue 17 row 19)
    (["--alpha-prior", "1.2"], "--alpha-prior"),
    (["--cooldown", "-1"], "cooldown"),
    (["--tune", "--tune-method", "warp-drive"], "--tune-method"),
    (["--tune", "--tune-method", "specdecode"], "--tune-method must be hf-heuristic, "),   # nothing to tune
    (["--temperature", "0.8"], "needs --simulate"),
    (["--simulate", "-t", "0.7", "--validate"], "--check-live"),
    (["--simulate", "-t", "0.7", "--drafter", "prompt-lookup"], "needs a draft model"),
    (["--validate"], "--simulate"),
    (["--latency", "--shape", "gpt-5"], "unknown shape"),
    (["--latency", "--verify-k", "1,a"], "--verify-k"),
    (["--p-min", "1.5"], "--p-min"),             # the peers' parameters (issue 27)
    (["--edl-lambda", "2"], "--edl-lambda"),
    (["--edl-target", "-0.1"], "--edl-target"),
    (["--svip-h", "-1"], "--svip-h"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    code, out, err = _run(capsys, *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gammatune: error:") and needle in lines[0]
    assert "Traceback" not in err and out == ""


def test_malformed_prompt_file(capsys, tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"id": "a", "turns": ["hi"]}\nnot json\n')
    code, _, err = _run(capsys, "--prompts", str(f))
    assert code == 2 and "line 2" in err and len(err.strip().splitlines()) == 1


def test_parsers():
    assert parse_gammas("1, 2,24") == [1, 2, 24]
    assert parse_methods("all") == parse_methods(
        "specdecode,hf-heuristic,assistant-threshold,gammatune,gammatune+,adaptive-k,p-min,adaedl,svip,ema-tiers,"
        "ucb,costaware")
    with pytest.raises(InvalidParameter):
        parse_gammas("")
    with pytest.raises(InvalidParameter):
        parse_methods("gammatune,")


@pytest.mark.parametrize("argv,methods", [
    ([], "LIVE"), (["--simulate"], "ALL"), (["--methods", "all"], "ALL"), (["--method", "ucb"], ["ucb"]),
])
def test_a_live_sweep_runs_its_seven_methods_and_the_simulator_all_twelve(capsys, monkeypatch, argv, methods):
    """The peers join every simulated run; a live sweep without --methods takes as long as before them."""
    from gammatune_tui.bench.modes import sweep
    from gammatune_tui.engine.policies import LIVE_DEFAULT_METHODS, METHODS

    seen = {}
    monkeypatch.setattr(sweep, "run_sweep", lambda console, err, cfg, *a, **k: seen.setdefault("methods", cfg.methods))
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--limit", "1", *argv])
    assert exc.value.code == 0
    want = {"LIVE": list(LIVE_DEFAULT_METHODS), "ALL": list(METHODS)}[methods] if isinstance(methods, str) else methods
    assert seen["methods"] == want
    assert LIVE_DEFAULT_METHODS == ("specdecode", "hf-heuristic", "assistant-threshold", "gammatune", "gammatune+",
                                    "adaptive-k", "costaware") and len(METHODS) == 12
