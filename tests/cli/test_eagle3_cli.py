"""`--draft eagle3:PATH` from the command line: run, compare, the pair's title, and bad heads in one line."""

from __future__ import annotations

import re

import pytest

from clihelpers import assert_one_line, invoke
from tiny_eagle3 import head_tensors, write_head


@pytest.fixture(scope="module")
def heads(tiny_pair_dirs, tmp_path_factory):
    from transformers import AutoModelForCausalLM

    target = AutoModelForCausalLM.from_pretrained(str(tiny_pair_dirs[0]))
    root = tmp_path_factory.mktemp("eagle3")
    v = target.config.vocab_size
    return {
        "speculators": write_head(root / "spec", target, head_tensors(target, range(0, v, 3)), "speculators", (0, 1, 2)),
        "safeailab": write_head(root / "safe", target, head_tensors(target, range(0, v, 2)), "safeailab", (0, 1, 1)),
        "default ids": write_head(root / "dflt", target, head_tensors(target, range(v)), "safeailab", None),
    }


@pytest.mark.parametrize("how", ["prefix", "config"])
def test_run_drafts_with_a_head_named_or_recognised(capsys, tiny_pair_dirs, heads, how):
    head = heads["speculators"] if how == "prefix" else heads["safeailab"]
    draft = f"eagle3:{head}" if how == "prefix" else str(head)
    code, out, err = invoke(["run", "--target", str(tiny_pair_dirs[0]), "--draft", draft, "--device", "cpu",
                             "--threads", "1", "-t", "0", "-n", "12", "--raw", "abcabc"], capsys)
    assert code == 0, err
    both = out + err
    assert "eagle3" in both and "the oracle" in both   # hindsight replays the head's own chains (head_trace.py)


def test_compare_races_a_head_beside_prompt_lookup_losslessly(capsys, tiny_pair_dirs, heads):
    code, out, err = invoke(["compare", "--print", "--target", str(tiny_pair_dirs[0]), "--device", "cpu",
                             "--drafters", f"eagle3:{heads['speculators']},prompt-lookup", "-M", "specdecode",
                             "-n", "12", "-t", "0", "--raw", "abcabcabc"], capsys)
    assert code == 0, err
    assert "specdecode/eagle3" in out and "specdecode/lookup" in out
    assert "lossless: every method produced the target's own tokens" in out
    rows = {name: line.split()[-1] for line in out.splitlines() for name in ("eagle3", "lookup")
            if f"specdecode/{name} " in line and line.lstrip()[:1].isdigit()}   # the ranked table's calls t/d
    assert rows["lookup"].endswith("/0") and not rows["eagle3"].endswith("/0")   # a head's forwards are counted


def test_bench_simulates_a_head_and_prints_each_engines_setting_for_it(capsys, tiny_pair_dirs, heads, tmp_path):
    """`bench --simulate` replays the head's own chains (checked against a live run, step for step), and `--for`
    prints the engines' EAGLE-3 syntax with the head's folder, not a draft model's."""
    code, out, err = invoke(["bench", "--simulate", "--target", str(tiny_pair_dirs[0]), "--draft",
                             f"eagle3:{heads['speculators']}", "--device", "cpu", "--threads", "1", "--limit", "1",
                             "-n", "12", "--methods", "specdecode,gammatune", "--gammas", "1,4", "--for",
                             "vllm,sglang,llama.cpp", "--out", str(tmp_path / "b.json")], capsys)
    assert code == 0, err
    assert "step-exact: 4/4" in out   # 2 methods × γ0 1 and 4
    assert f'"method": "eagle3", "model": "{heads["speculators"]}"' in out
    assert f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {heads['speculators']}" in out
    # llama.cpp (common/speculative.cpp at 001d906) runs the head's GGUF as the draft model of draft-eagle3
    assert re.search(r"llama-server -m \S+\.gguf -md spec\.gguf --spec-type draft-eagle3 --spec-draft-n-max \d", out)
    assert "runs no eagle3" not in out


def test_the_pair_title_names_the_head(tiny_pair_dirs, heads):
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.session.turns import pair_title

    pair = load_pair(str(tiny_pair_dirs[0]), f"eagle3:{heads['speculators']}", device="cpu", threads=1,
                     warmup=False)
    assert "+ eagle3, layers 0/1/2, 87 draft vocabulary" in pair_title(pair)


@pytest.mark.parametrize("draft, words", [
    ("default ids", "reads target layers [2, 1, -1], the target has 2 layers"),
    ("eagle3:/nonexistent/head", "no config.json there"),
    ("eagle3:", "needs its head's folder: --draft eagle3:PATH"),
])
def test_a_bad_head_is_one_line_before_anything_loads(capsys, tiny_pair_dirs, heads, draft, words):
    draft = str(heads[draft]) if draft in heads else draft
    code, out, err = invoke(["run", "--target", str(tiny_pair_dirs[0]), "--draft", draft, "--device", "cpu",
                             "-n", "4", "x"], capsys)
    assert_one_line(code, err, words)


def test_a_head_beside_another_drafter_is_one_line(capsys, tiny_pair_dirs, heads):
    code, out, err = invoke(["run", "--target", str(tiny_pair_dirs[0]), "--draft", f"eagle3:{heads['safeailab']}",
                             "--drafter", "prompt-lookup", "--device", "cpu", "-n", "4", "x"], capsys)
    assert_one_line(code, err)


def test_doctor_splits_the_heads_step_into_its_layer_and_its_projection(capsys, tiny_pair_dirs, heads, tmp_path):
    """Where an EAGLE-3 head's step goes: its layer, and its projection over its reduced vocabulary (the
    speculators head drafts over every third id), each timed on its own under the verdict."""
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--drafters",
                             f"eagle3:{heads['speculators']}", "-n", "12", "--limit", "1", "--device", "cpu",
                             "--threads", "1", "--json", str(tmp_path / "d.json")], capsys)
    assert code == 0, err
    v = len(range(0, 260, 3))
    assert re.search(rf"a drafting step: the head's layer [\d.]+ ms \(\d+%\), its projection over {v} tokens "
                     r"[\d.]+ ms \(\d+%\)", out)
