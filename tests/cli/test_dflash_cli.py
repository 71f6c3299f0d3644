"""`--draft dflash:PATH` (or a DFlash drafter's folder) from the command line: run, compare, bench --simulate with each
engine's syntax, the pair's title, and a drafter for another target in one line."""

from __future__ import annotations

import re

import pytest

from clihelpers import assert_one_line, invoke
from tiny_dflash import write_dflash


@pytest.fixture(scope="module")
def drafter(tiny_pair_dirs, tmp_path_factory):
    from transformers import AutoModelForCausalLM

    target = AutoModelForCausalLM.from_pretrained(str(tiny_pair_dirs[0]))
    return write_dflash(tmp_path_factory.mktemp("dflash"), target, layer_ids=(0, 1), block_size=4)


@pytest.mark.parametrize("how", ["prefix", "config"])
def test_run_and_compare_draft_with_a_dflash_drafter_losslessly(capsys, tiny_pair_dirs, drafter, how):
    draft = f"dflash:{drafter}" if how == "prefix" else str(drafter)
    code, out, err = invoke(["compare", "--print", "--target", str(tiny_pair_dirs[0]), "--device", "cpu",
                             "--drafters", f"{draft},prompt-lookup", "-M", "specdecode", "-n", "12", "-t", "0", "--raw",
                             "abcabcabc"], capsys)
    assert code == 0, err
    assert "specdecode/dflash" in out and "lossless: every method produced the target's own tokens" in out


def test_bench_simulates_the_drafter_step_exactly_and_prints_each_engines_setting(capsys, tiny_pair_dirs, drafter,
                                                                                 tmp_path):
    code, out, err = invoke(["bench", "--simulate", "--target", str(tiny_pair_dirs[0]), "--draft", f"dflash:{drafter}",
                             "--device", "cpu", "--threads", "1", "--limit", "1", "-n", "12", "--methods",
                             "specdecode,gammatune", "--gammas", "1,4", "--for", "vllm,sglang,llama.cpp",
                             "--out", str(tmp_path / "b.json")], capsys)
    assert code == 0, err
    assert "step-exact: 4/4" in out
    assert f'"method": "dflash", "model": "{drafter}"' in out
    assert "--speculative-algorithm DFLASH" in out and "--speculative-num-draft-tokens 4" in out
    # llama.cpp (common/speculative.cpp at 001d906): the drafter's GGUF as the draft model of draft-dflash
    assert re.search(rf"llama-server -m \S+\.gguf -md {re.escape(drafter.name)}\.gguf --spec-type draft-dflash "
                     r"--spec-draft-n-max \d", out)


def test_the_title_names_it_and_a_drafter_for_another_target_is_one_line(capsys, tiny_pair_dirs, drafter, tmp_path):
    from transformers import AutoModelForCausalLM

    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.session.turns import pair_title

    pair = load_pair(str(tiny_pair_dirs[0]), f"dflash:{drafter}", device="cpu", threads=1, warmup=False)
    assert "+ dflash, block 4, layers 0/1" in pair_title(pair)
    target = AutoModelForCausalLM.from_pretrained(str(tiny_pair_dirs[0]))
    deep = write_dflash(tmp_path / "deep", target, layer_ids=(0, 5))
    capsys.readouterr()
    code, out, err = invoke(["run", "x", "--target", str(tiny_pair_dirs[0]), "--draft", f"dflash:{deep}", "-n", "4"],
                            capsys)
    assert_one_line(code, err, "reads target layers [0, 5], the target has 2 layers")


def test_doctor_splits_a_block_into_the_drafters_forward_and_the_targets_head(capsys, tiny_pair_dirs, drafter,
                                                                              tmp_path):
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--drafters", f"dflash:{drafter}",
                             "-n", "12", "--limit", "1", "--device", "cpu", "--threads", "1",
                             "--json", str(tmp_path / "d.json")], capsys)
    assert code == 0, err
    assert re.search(r"a drafting step: the drafter's forward over a block of 4 [\d.]+ ms \(\d+%\), the target's "
                     r"head over its 3 drafted positions [\d.]+ ms \(\d+%\)", out)
