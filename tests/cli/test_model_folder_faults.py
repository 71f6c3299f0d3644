"""Model folders whose weights are not what their config asks for: one line naming what is missing, exit 2.

Issue 40 rows 2 and 9. A config.json declaring more layers than the weights
hold loaded with random layers (two runs printed different greedy text), and
a sharded model missing a shard file was said to have "no safetensors
weights; pass --allow-pickle" (and the same again with --allow-pickle).
"""

from __future__ import annotations

import json

import pytest

from clihelpers import assert_one_line, invoke


def _run(target, *extra):
    return ["run", "def add(a, b):", "-n", "4", "-t", "0", "--target", str(target), "--drafter", "prompt-lookup",
            "--device", "cpu", "--threads", "1", *extra]


@pytest.fixture(scope="module")
def tok():
    from tiny_models import make_byte_tokenizer

    return make_byte_tokenizer()


def test_a_config_declaring_more_layers_than_the_weights_hold_names_them(tmp_path, tok, capsys):
    from gammatune_tui.engine.loading.families import tiny_model

    target = tmp_path / "q6"
    model = tiny_model("qwen3_5_text", seed=1, vocab_size=len(tok), num_hidden_layers=4,
                       layer_types=["linear_attention", "full_attention"] * 2)
    model.save_pretrained(target)
    tok.save_pretrained(target)
    cfg = json.loads((target / "config.json").read_text())
    cfg["num_hidden_layers"] = 6
    cfg["layer_types"] = cfg["layer_types"] + ["linear_attention", "full_attention"]
    (target / "config.json").write_text(json.dumps(cfg))
    capsys.readouterr()   # the progress bars of save_pretrained
    code, out, err = invoke(_run(target), capsys)
    assert_one_line(code, err, "layers 4–5", "config.json")
    assert out == ""


@pytest.mark.parametrize("pickle", [False, True])
def test_a_sharded_model_without_one_of_its_shards_names_the_shard(tmp_path, tok, capsys, pickle):
    from tiny_models import make_llama

    target = tmp_path / "sharded"
    make_llama(len(tok), seed=1, hidden=64).save_pretrained(target, max_shard_size="40KB")
    tok.save_pretrained(target)
    shards = sorted(target.glob("model-*.safetensors"))
    assert len(shards) > 2
    shards[-1].unlink()
    capsys.readouterr()   # the progress bars of save_pretrained
    code, out, err = invoke(_run(target, *(["--allow-pickle"] if pickle else [])), capsys)
    assert_one_line(code, err, shards[-1].name, "model.safetensors.index.json")
    assert "--allow-pickle" not in err


@pytest.fixture()
def llama_dir(tmp_path, tok):
    from tiny_models import make_llama

    d = tmp_path / "llama"
    make_llama(len(tok), seed=1, hidden=64).save_pretrained(d, max_shard_size="40KB")
    tok.save_pretrained(d)
    return d


def _edit_config(folder, **changes):
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


def test_a_config_declaring_fewer_layers_than_the_weights_hold_names_them(llama_dir, capsys):
    """The round 6 trial: one layer declared over two layers' weights ran a smaller model than the files hold,
    silently (exit 0)."""
    _edit_config(llama_dir, num_hidden_layers=1)
    capsys.readouterr()
    code, out, err = invoke(_run(llama_dir), capsys)
    assert_one_line(code, err, "layer 1", "fewer layers")


def test_shards_without_their_index_are_named_as_such(llama_dir, capsys):
    (llama_dir / "model.safetensors.index.json").unlink()
    capsys.readouterr()
    code, out, err = invoke(_run(llama_dir), capsys)
    assert_one_line(code, err, "index.json", "shard files")
    assert "--allow-pickle" not in err


@pytest.mark.parametrize("name", ["generation_config.json", "tokenizer.json", "model.safetensors.index.json"])
def test_a_json_file_of_the_folder_that_is_not_json_is_named(llama_dir, capsys, name):
    """A broken generation_config.json was skipped silently (exit 0); a broken tokenizer.json was one line of the
    JSON parser's ('Expecting property name …') naming no file."""
    (llama_dir / name).write_text("{")
    capsys.readouterr()
    code, out, err = invoke(_run(llama_dir), capsys)
    assert_one_line(code, err, name, "not valid JSON")


def test_a_hybrid_whose_config_does_not_fit_its_layers_is_named_as_such(tmp_path, tok, capsys):
    """A zamba2 declaring 2 Mamba heads of 64 over a 192-wide Mamba layer cannot run at all; it was refused as a
    state gammatune 'cannot run and rewind', which blamed the wrong thing."""
    from gammatune_tui.engine.loading.families import tiny_model

    target = tmp_path / "z2"
    tiny_model("zamba2", seed=5, vocab_size=len(tok), num_hidden_layers=3, hidden_size=96,
               layers_block_type=["mamba", "hybrid", "mamba"], hybrid_layer_ids=[1]).save_pretrained(target)
    tok.save_pretrained(target)
    capsys.readouterr()
    code, out, err = invoke(_run(target), capsys)
    assert_one_line(code, err, "does not run at all", "config.json")
