"""The recipe runs end to end on a corpus slice (seconds) and leaves complete model directories."""

from __future__ import annotations

import json

import pytest
from safetensors import safe_open

from gammatune_tui.demo import corpus
from gammatune_tui.demo.measure import regime_counts, run_lengths
from gammatune_tui.demo.train import main as train_main


def test_corpus_is_the_stdlib_without_tests_or_site_packages():
    files = corpus.source_files()
    rels = [f.relative_to(corpus.stdlib_root()).as_posix() for f in files]
    assert "os.py" in rels and "json/decoder.py" in rels
    for r in rels:
        parts = r.split("/")
        assert not {"test", "tests", "idle_test", "site-packages"} & set(parts[:-1]), r
        assert not r.startswith("encodings/")
    assert rels == sorted(rels)


def test_corpus_split_is_deterministic():
    a = corpus.load_corpus(max_bytes=300_000)
    b = corpus.load_corpus(max_bytes=300_000)
    assert a.train == b.train and a.val == b.val
    assert a.val and a.train
    assert a.train_bytes >= 1


@pytest.fixture(scope="module")
def tiny_pair_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo_pair")
    assert train_main(["--tiny", "--out", str(out), "--threads", "1", "--max-bytes", "60000"]) == 0
    return out


@pytest.mark.parametrize("name", ["target", "draft"])
def test_recipe_writes_complete_model_dirs(tiny_pair_dir, name):
    d = tiny_pair_dir / name
    for f in ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
              "tokenizer_config.json", "recipe.json"):
        assert (d / f).is_file(), f
    gen = json.loads((d / "generation_config.json").read_text())
    assert gen["eos_token_id"] == 1 and gen["bos_token_id"] == 0
    with safe_open(str(d / "model.safetensors"), "pt") as st:
        assert {str(st.get_tensor(k).dtype) for k in st.keys()} == {"torch.float16"}
    recipe = json.loads((d / "recipe.json").read_text())
    assert recipe["steps"] == 4 and recipe["params"] > 0 and recipe["corpus_train_bytes"] > 0
    assert recipe["val_bits_per_byte"] > 0


def test_recipe_output_loads_offline_and_generates(tiny_pair_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_pair_dir / "target")
    tok_d = AutoTokenizer.from_pretrained(tiny_pair_dir / "draft")
    assert tok.get_vocab() == tok_d.get_vocab()
    t = AutoModelForCausalLM.from_pretrained(tiny_pair_dir / "target", dtype=torch.float32)
    d = AutoModelForCausalLM.from_pretrained(tiny_pair_dir / "draft", dtype=torch.float32)
    assert sum(p.numel() for p in d.parameters()) < sum(p.numel() for p in t.parameters())
    ids = tok("def f(x):", return_tensors="pt").input_ids
    out = t.generate(ids, max_new_tokens=5, do_sample=False)
    assert out.shape[1] == ids.shape[1] + 5 or int(out[0, -1]) == tok.eos_token_id


def test_recipe_is_seeded(tmp_path):
    """Same seed, same weights: the recipe is reproducible."""
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert train_main(["--tiny", "--stage", "target", "--out", str(out), "--threads", "1",
                           "--max-bytes", "30000"]) == 0
    assert (a / "target" / "model.safetensors").read_bytes() == (b / "target" / "model.safetensors").read_bytes()


def test_run_lengths_and_regimes_by_hand():
    m = [True, True, False, False, True] + [True] * 9 + [False, True]
    assert run_lengths(m) == [2, 0, 10, 1]
    assert regime_counts(run_lengths(m)) == {"0": 1, "1-3": 2, "4-7": 0, "8+": 1}


def test_measure_script_runs_on_the_recipe_output(tiny_pair_dir, tmp_path, capsys):
    from gammatune_tui.demo.measure import main as measure_main

    out = tmp_path / "m.json"
    assert measure_main(["--pair-dir", str(tiny_pair_dir), "--threads", "1", "--max-new-tokens", "6",
                         "--methods", "specdecode:3", "--show", "1", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert 0.0 <= res["alpha_greedy"] <= 1.0
    assert sum(res["regimes"].values()) == sum(res["run_length_histogram"].values())
    spec = res["speculative"]["specdecode:3"]
    assert spec["identical_to_plain"] == res["prompts"]
    assert "α" in capsys.readouterr().out
