"""`--draft gemma4-assistant:PATH` (or a Gemma 4 assistant's folder) from the command line: run, compare, bench
--simulate with each engine's syntax, doctor, the pair's title, hf.generate, and an assistant for another target in
one line before anything runs."""

from __future__ import annotations

import json
import re

import pytest

from clihelpers import assert_one_line, invoke
from tiny_gemma4 import make_gemma4, write_assistant
from tiny_models import make_byte_tokenizer


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """A tiny Gemma 4 target folder (with the byte tokenizer) and an assistant for it."""
    root = tmp_path_factory.mktemp("gemma4")
    target = make_gemma4()
    target.save_pretrained(root / "target")
    make_byte_tokenizer().save_pretrained(root / "target")
    return root / "target", write_assistant(root / "assistant", target, centroids=4), target


@pytest.mark.parametrize("how", ["prefix", "config"])
def test_compare_races_the_assistant_losslessly(capsys, dirs, how):
    target, assistant, _ = dirs
    draft = f"gemma4-assistant:{assistant}" if how == "prefix" else str(assistant)
    code, out, err = invoke(["compare", "--print", "--target", str(target), "--device", "cpu",
                             "--drafters", f"{draft},prompt-lookup", "-M", "specdecode", "-n", "12", "-t", "0", "--raw",
                             "abcabcabc"], capsys)
    assert code == 0, err
    assert "specdecode/assistant" in out and "lossless: every method produced the target's own tokens" in out


def test_bench_simulates_it_step_exactly_and_prints_each_engines_setting(capsys, dirs, tmp_path):
    target, assistant, _ = dirs
    code, out, err = invoke(["bench", "--simulate", "--target", str(target), "--draft", f"gemma4-assistant:{assistant}",
                             "--device", "cpu", "--threads", "1", "--limit", "1", "-n", "12", "--methods",
                             "specdecode,gammatune", "--gammas", "1,4", "--for", "vllm,sglang,llama.cpp,transformers",
                             "--out", str(tmp_path / "b.json")], capsys)
    assert code == 0, err
    assert "step-exact: 4/4" in out
    assert f'"method": "mtp", "model": "{assistant}"' in out   # vLLM ≥ 0.21 serves the assistant as MTP
    assert "--speculative-algorithm FROZEN_KV_MTP --speculative-draft-model-path" in out
    assert "assistant_model=AutoModelForCausalLM.from_pretrained(" in out
    # llama.cpp (common/speculative.cpp at 001d906) runs the assistant's GGUF as the draft-mtp draft model
    assert re.search(r"llama-server -m target\.gguf -md assistant\.gguf --spec-type draft-mtp --spec-draft-n-max \d", out)


def test_run_doctor_and_hf_generate(capsys, dirs):
    import torch
    from transformers import AutoModelForCausalLM

    from gammatune_tui import hf

    target, assistant, _ = dirs
    code, out, err = invoke(["run", "--target", str(target), "--draft", str(assistant), "--device", "cpu", "-n", "10",
                             "-t", "0", "--raw", "abc"], capsys)
    assert code == 0, err
    code, out, err = invoke(["doctor", "--target", str(target), "--drafters", f"gemma4-assistant:{assistant}",
                             "--device", "cpu", "--threads", "1", "--limit", "1", "-n", "10", "--gammas", "1,3"], capsys)
    assert code == 0, err
    assert "assistant" in out
    model = AutoModelForCausalLM.from_pretrained(str(target)).eval()
    x = torch.tensor([[0, 97, 98, 99]])
    want = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=10)
    got = hf.generate(model, x, draft_model=f"gemma4-assistant:{assistant}", max_new_tokens=10, do_sample=False)
    assert got.tolist() == want.tolist()


def test_doctor_splits_the_assistants_step_into_its_layers_and_its_map_into_the_vocabulary(capsys, dirs, tmp_path):
    """Where the assistant's step goes: its layers, then its centroid head (the scoring of its centroids, and the
    gather over the chosen centroids' tokens), each timed on its own under the verdict."""
    target, assistant, _ = dirs
    code, out, err = invoke(["doctor", "--target", str(target), "--drafters", f"gemma4-assistant:{assistant}",
                             "-n", "12", "--limit", "1", "--device", "cpu", "--threads", "1",
                             "--json", str(tmp_path / "d.json")], capsys)
    assert code == 0, err
    assert re.search(r"a drafting step: its 2 layers [\d.]+ ms \(\d+%\), its scoring of 4 centroids [\d.]+ ms "
                     r"\(\d+%\), its gather over the top 1 centroids' 65 tokens \(of 260\) [\d.]+ ms \(\d+%\)", out)


def test_the_title_names_it_and_an_assistant_for_another_target_is_one_line(capsys, dirs, tiny_pair_dirs, tmp_path):
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.session.turns import pair_title

    target, assistant, model = dirs
    pair = load_pair(str(target), f"gemma4-assistant:{assistant}", device="cpu", threads=1, warmup=False)
    assert "+ Gemma 4 assistant, 2 layers, 4 centroids" in pair_title(pair)
    wide = write_assistant(tmp_path / "wide", model, backbone_hidden_size=128)
    heads = write_assistant(tmp_path / "heads", model)   # 4 key-value heads where the target's layers have 2
    cfg = json.loads((heads / "config.json").read_text())
    cfg["text_config"]["num_key_value_heads"] = 4
    (heads / "config.json").write_text(json.dumps(cfg))
    for target_dir, folder, words in (
            (target, wide, "trained on a target 128 wide, this one is 64"),
            (target, heads, "its layer 0 (sliding_attention) reads 4 heads of 16, the target's 2 of 16"),
            (tiny_pair_dirs[0], assistant, "it drafts for a Gemma 4 target, which keeps the keys it reads; this "
                                           "target is 'llama'"),
            (target, tmp_path / "nowhere", "no config.json there")):
        capsys.readouterr()
        code, out, err = invoke(["run", "x", "--target", str(target_dir), "--draft", f"gemma4-assistant:{folder}",
                                 "-n", "4"], capsys)
        assert_one_line(code, err, words)
