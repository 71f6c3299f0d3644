"""`--drafter prompt-lookup` on run, chat, compare and bench: the target alone, headers that say so, exact sweeps."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.engine.events import event_from_json
from clihelpers import invoke


@pytest.fixture()
def target_args(tiny_pair_dirs):
    return ["--target", str(tiny_pair_dirs[0]), "--device", "cpu", "--threads", "1"]


def test_run_drafts_by_prompt_lookup_without_a_draft_model(capsys, target_args):
    code, out, err = invoke(["run", "abcabcabcabc", *target_args, "--drafter", "prompt-lookup", "--ngram-max", "2",
                             "-n", "16", "--json", "--raw"], capsys)
    assert code == 0, err
    events = [event_from_json(json.loads(line)) for line in out.splitlines()]
    header, summary = events[0], events[-1]
    assert header.drafter == "prompt-lookup" and header.draft == "prompt-lookup"
    assert header.drafter_params == {"ngram_min": 1, "ngram_max": 2}
    assert summary.drafter == "prompt-lookup" and summary.draft_calls == 0 and summary.tokens == 16
    # the plain form says who drafted, in the header line and the summary table
    code, out, err = invoke(["run", "abcabcabc", *target_args, "--drafter", "prompt-lookup", "-n", "8", "--raw"], capsys)
    assert code == 0, err
    assert "draft prompt-lookup" in err and "drafter" in err and err.count("prompt-lookup") >= 2   # piped: on stderr


@pytest.mark.parametrize("command", ["run", "chat", "compare", "bench"])
@pytest.mark.parametrize("extra, message", [
    (["--drafter", "ngram"], "unknown drafter 'ngram'"),
    (["--drafter", "prompt-lookup", "--ngram-min", "0"], "--ngram-min must be a whole number in [1, 32]"),
    (["--drafter", "prompt-lookup", "--ngram-min", "3", "--ngram-max", "2"], "must not exceed --ngram-max"),
    (["--drafter", "prompt-lookup", "--draft", "somewhere"], "leave --draft out"),
])
def test_bad_drafter_options_are_one_line_errors(capsys, command, extra, message):
    code, out, err = invoke([command, *extra, "--target", "nowhere"], capsys)
    assert code == 2 and err.startswith("gammatune: error: ") and message in err and err.count("\n") == 1


def test_compare_races_model_drafting_against_prompt_lookup(capsys, tiny_pair_dirs):
    t, d = map(str, tiny_pair_dirs)
    code, out, err = invoke(["compare", "--print", "--target", t, "--draft", d, "--device", "cpu", "--drafters",
                             "model,prompt-lookup", "-M", "specdecode,gammatune", "-n", "12", "-t", "0", "--raw",
                             "abcabcabc"], capsys)
    assert code == 0, err
    for label in ("specdecode/model", "specdecode/lookup", "gammatune/model", "gammatune/lookup"):
        assert label in out
    assert "lossless: every method produced the target's own tokens" in out
    code, out, err = invoke(["compare", "--print", "--drafters", "model,prompt-lookup", "-M", "all", "x"], capsys)
    from gammatune_tui.engine.policies import METHODS

    assert code == 2 and f"{2 * len(METHODS)} contestants" in err


def test_bench_simulates_prompt_lookup_exactly_and_races_transformers_lookup(capsys, tiny_pair_dirs, tmp_path):
    t = str(tiny_pair_dirs[0])
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a", "turns": ["abcabcabcab"]}\n{"id": "b", "turns": ["def f(x): return f(x)"]}\n')
    out = tmp_path / "sim.json"
    code, text, err = invoke(["bench", "--simulate", "--check-live", "2", "--drafter", "prompt-lookup", "--target", t,
                              "--device", "cpu", "--prompts", str(prompts), "-n", "16", "--gammas", "2,4",
                              "--methods", "specdecode,gammatune+,adaptive-k", "--no-baselines", "--raw", "-o",
                              str(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["live_check"]["step_exact"] == data["live_check"]["total"] > 0
    assert all(c["output_equal"] for c in data["live_check"]["checks"])
    # live, with transformers' prompt lookup as the peer at the same window and n-gram sizes
    out = tmp_path / "live.json"
    code, text, err = invoke(["bench", "--drafter", "prompt-lookup", "--target", t, "--device", "cpu", "--prompts",
                              str(prompts), "-n", "12", "--gammas", "2", "--methods", "specdecode", "--raw", "-o",
                              str(out)], capsys)
    assert code == 0, err
    live = json.loads(out.read_text())["live"]
    methods = {r["method"] for r in live["records"]}
    assert methods == {"specdecode", "target-only", "hf-prompt-lookup"}
    assert not live["checks"]["outputs_differing_from_target_only"] and not live["checks"]["hf_outputs_differing"]
    assert "specdecode" in live["derived"]["engine_vs_hf"] and "hf-prompt-lookup" in text
