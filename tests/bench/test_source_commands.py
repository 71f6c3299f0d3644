"""`doctor --for` when the draft is a head or prompt lookup: each engine's own syntax for it, vLLM's MTP rule on K,
and llama.cpp's draft rule played over a head's chains (bench/deploy/source_commands.py, llamacpp.py)."""

from __future__ import annotations

import json
import shlex

import pytest

from gammatune_tui.bench.deploy import llamacpp
from gammatune_tui.bench.deploy.engines import BY_NAME
from gammatune_tui.bench.deploy.source_commands import head_layers, source_command
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.head_trace import HeadTrace
from gammatune_tui.bench.sim.simulate import play_trace
from gammatune_tui.engine import PolicySettings


def _setting(engine: str, k: int):
    return next(s for s in BY_NAME[engine].grid([k]) if s.label.startswith((f"K={k}", f"steps={k}", f"n-max {k},")))


def _vllm_config(line: str) -> dict:
    words = shlex.split(line.split("   #")[0])
    return json.loads(words[words.index("--speculative-config") + 1])


def test_each_engine_names_the_head_its_own_way(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"mtp_num_hidden_layers": 1}}))
    t = str(tmp_path)
    assert _vllm_config(source_command("vllm", t, "mtp", _setting("vllm", 3))) == {
        "method": "mtp", "num_speculative_tokens": 3}
    assert _vllm_config(source_command("vllm", t, "eagle3:/h/e3", _setting("vllm", 2))) == {
        "method": "eagle3", "model": "/h/e3", "num_speculative_tokens": 2}
    sg = source_command("sglang", t, "mtp", _setting("sglang", 3))
    assert "--speculative-algorithm NEXTN --speculative-num-steps 3" in sg and "--speculative-num-draft-tokens 4" in sg
    assert "--speculative-draft-model-path" not in sg   # the head is in the target's checkpoint
    assert "EAGLE3 --speculative-draft-model-path /h/e3" in source_command("sglang", t, "eagle3:/h/e3",
                                                                          _setting("sglang", 3))
    ll = source_command("llama.cpp", t, "mtp", _setting("llama.cpp", 4))
    assert "--spec-type draft-mtp --spec-draft-n-max 4" in ll and " -md " not in ll
    assert "use_mtp=True" in source_command("transformers", t, "mtp", _setting("transformers", 2))
    assert "ngram" in source_command("vllm", t, "prompt-lookup", _setting("vllm", 4))
    assert source_command("vllm", t, "/models/draft", _setting("vllm", 4)) is None   # a draft model: the engine's own
    assert "-md e3.gguf --spec-type draft-eagle3 --spec-draft-n-max 4" in source_command(
        "llama.cpp", t, "eagle3:/h/e3", _setting("llama.cpp", 4))   # the head's GGUF is the draft model
    assert "transformers runs no eagle3 source" in source_command("transformers", t, "eagle3:/h/e3",
                                                                  _setting("transformers", 2))


def test_a_heads_folder_given_as_a_path_is_named_as_the_head(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"]}))
    assert _vllm_config(source_command("vllm", "/t", str(tmp_path), _setting("vllm", 2)))["model"] == str(tmp_path)


def test_vllm_refuses_an_mtp_k_that_is_not_a_multiple_of_the_heads_layers(tmp_path):
    """vllm/config/speculative.py: K above n_predict must be a multiple of it (a 3-layer head takes 3 or 6, not 5)."""
    (tmp_path / "config.json").write_text(json.dumps({"num_nextn_predict_layers": 3}))
    assert head_layers(str(tmp_path)) == 3 and head_layers(str(tmp_path / "nowhere")) == 1
    assert "must be divisible by n_predict=3" in source_command("vllm", str(tmp_path), "mtp", _setting("vllm", 5))
    for k in (2, 3, 6):
        assert "divisible" not in source_command("vllm", str(tmp_path), "mtp", _setting("vllm", k))


def _trace() -> HeadTrace:
    toks = [5, 6, 7, 8, 9, 10, 11, 12]
    chains = [[t, t + 1, 99] for t in toks]   # first two right, the third wrong
    return HeadTrace(kind="mtp", params={}, prompt_id="p", prompt_ids=[1, 2], tokens=toks, proposals=chains,
                     tops=[[0.9, 0.6, 0.3]] * len(toks), chosen=[[0.9, 0.6, 0.3]] * len(toks),
                     entropy=[[0.1, 0.5, 1.0]] * len(toks), depth=3, eos_ids=[0], max_new_tokens=len(toks))


def test_llama_cpps_rule_plays_a_heads_chains():
    cost = CostModel(draft_token_s=1e-3, verify_s={1: 1e-2, 2: 1.1e-2, 4: 1.3e-2}, step_s=0.0, emit_token_s=0.0)
    trace = _trace()
    plain = llamacpp.play(trace, 3, 0, 0.0, None, cost)   # p-min 0: a fixed window, as specdecode plays it
    ref = play_trace(trace, PolicySettings.build("specdecode", 3).make(), None, cost)
    assert (plain.steps, plain.drafted, plain.accepted) == (ref.steps, ref.drafted, ref.accepted)
    cut = llamacpp.play(trace, 3, 0, 0.5, None, cost)   # the third token (top 0.3) is dropped, its forward paid
    assert cut.accepted == cut.drafted <= 2 * cut.steps and cut.draft_calls > cut.drafted
    assert plain.accepted < plain.drafted   # without p-min the wrong third token is drafted and rejected
    with pytest.raises(Exception, match="needs a chain of 4"):
        llamacpp.play(trace, 4, 0, 0.0, None, cost)


def test_a_block_drafter_runs_its_whole_block_in_sglang_and_is_md_in_llama_cpp(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "muse_glimmer_assistant", "block_size": 16}))
    d = f"dflash:{tmp_path}"
    assert _vllm_config(source_command("vllm", "/t", d, _setting("vllm", 7))) == {
        "method": "dflash", "model": str(tmp_path), "num_speculative_tokens": 7}
    sg = source_command("sglang", "/t", d, _setting("sglang", 3))
    assert "--speculative-algorithm DFLASH" in sg and "--speculative-num-draft-tokens 16" in sg
    assert "--speculative-num-steps" not in sg
    ll = source_command("llama.cpp", "/t", d, _setting("llama.cpp", 4))
    assert f"-md {tmp_path.name}.gguf --spec-type draft-dflash --spec-draft-n-max 4" in ll and "clamps" not in ll
    # common_speculative_impl_draft_dflash (llama.cpp 001d906) clamps n-max to block_size - 1: the line says so
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "muse_glimmer_assistant", "block_size": 4}))
    ll = source_command("llama.cpp", "/t", d, _setting("llama.cpp", 5))
    assert "--spec-draft-n-max 5" in ll and "llama.cpp clamps this n-max to the drafter's block - 1 = 3" in ll
    assert "clamps" not in source_command("llama.cpp", "/t", d, _setting("llama.cpp", 3))


# llama.cpp's `--spec-type` names, copied from `common_speculative_type_from_name_map` in common/speculative.cpp at
# commit 001d906 (ggml-org/llama.cpp)
LLAMA_CPP_SPEC_TYPES = ("none", "draft-simple", "draft-eagle3", "draft-mtp", "draft-mtp-adaptive", "draft-dflash",
                        "draft-dspark", "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")


def test_every_llama_cpp_name_a_source_prints_is_a_spec_type_llama_cpp_takes():
    """What `doctor --for llama.cpp` prints after `--spec-type` is a name llama-server parses (the Gemma 4 assistant
    runs as `draft-mtp` with its GGUF as the draft model, an EAGLE-3 head as `draft-eagle3`, a DFlash drafter as
    `draft-dflash`); a misspelt type would stop the server at start."""
    from gammatune_tui.engine.common.names import SOURCES

    names = {s.name: dict(s.serve_as)["llama.cpp"] for s in SOURCES if "llama.cpp" in dict(s.serve_as)}
    assert names["gemma4-assistant"] == "draft-mtp" and names["dflash"] == "draft-dflash"
    assert names["eagle3"] == "draft-eagle3"
    assert set(names.values()) <= set(LLAMA_CPP_SPEC_TYPES), names
    line = source_command("llama.cpp", "/m/t", "gemma4-assistant:/h/g4-assistant", _setting("llama.cpp", 3))
    assert "-md g4-assistant.gguf --spec-type draft-mtp --spec-draft-n-max 3" in line
    line = source_command("llama.cpp", "/m/t", "eagle3:/h/t-eagle3", _setting("llama.cpp", 3))
    assert line.startswith("llama-server -m t.gguf -md t-eagle3.gguf --spec-type draft-eagle3 --spec-draft-n-max 3")
