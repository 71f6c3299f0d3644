"""`doctor --check-command`: each pitfall of 2026 found in the command line that walks into it, in one line that says
what happens and where it was reported; a command without one says so; a command that cannot be read is one line,
exit 2 (bench/doctor/pitfalls.py)."""

from __future__ import annotations

import json

import pytest

from clihelpers import assert_one_line, invoke
from gammatune_tui.bench.doctor.pitfalls import RULES, check

LLAMA = "llama-server -m t.gguf -md d.gguf --spec-draft-n-max 4 --spec-draft-p-min 0.75"
VLLM_DRAFT = """vllm serve ./t --speculative-config '{"method": "draft_model", "model": "./d", "num_speculative_tokens": 3}'"""
# each pitfall: a command that walks into it, and the words of its line
CASES = {
    "renamed flag": ("llama-server -m t.gguf -md d.gguf --draft-max 8 --spec-draft-p-min 0.5",
                     "--draft-max was renamed --spec-draft-n-max"),
    "p-min at 0.00": ("llama-server -m t.gguf -md d.gguf --spec-draft-n-max 8", "--spec-draft-p-min is 0.00"),
    "greedy draft sampling": ("""vllm serve ./t --speculative-config '{"method": "eagle3", "model": "./h", """
                              """"num_speculative_tokens": 3, "draft_sample_method": "greedy"}'""",
                              "acceptance collapses at temperature > 0"),
    "MTP chained past its depth": ("""vllm serve ./q --speculative-config '{"method": "mtp", "num_speculative_tokens": 4}'""",
                                   "K=4 chains a one-layer MTP head past its depth"),
    "MTP slower than plain": ("llama-server -m q.gguf --spec-type draft-mtp --spec-draft-n-max 1 --spec-draft-p-min 0.5",
                              "vLLM #39680"),
    "SGLang draft tokens": ("python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
                            "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8",
                            "should be 4"),
    "long context": (LLAMA + " -c 131072", "a context of 131,072 tokens: acceptance falls"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_pitfall_is_found_in_the_command_that_walks_into_it(name):
    command, words = CASES[name]
    _, found = check(command, versions=lambda p: None)
    lines = dict(found)
    assert name in lines and words in lines[name], found


def test_a_moe_target_and_a_pinned_engine_are_found_from_the_folder_and_the_versions(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"num_experts": 128, "num_experts_per_tok": 8}))
    _, found = check(f"vllm serve {tmp_path} --speculative-config '{{\"method\": \"ngram\", "
                     "\"num_speculative_tokens\": 3}'",
                     versions={"vllm": "0.33.1", "transformers": "5.24.0"}.get)
    lines = dict(found)
    assert "128 experts, 8 per token" in lines["MoE verify"]
    assert "vLLM 0.33.1 pins transformers < 5.21 and this environment has 5.24.0" in lines["version pin"]
    _, clean = check(VLLM_DRAFT, versions={"vllm": "0.33.1", "transformers": "5.20.0"}.get)
    assert "version pin" not in dict(clean)


def test_a_command_without_a_pitfall_says_so_and_every_rule_has_a_case(capsys):
    assert check(LLAMA, versions=lambda p: None)[1] == [] and check(VLLM_DRAFT, versions=lambda p: None)[1] == []
    assert {n for n, _ in RULES} == set(CASES) | {"MoE verify"}
    code, out, err = invoke(["doctor", "--check-command", LLAMA], capsys)
    assert code == 0 and "llama.cpp command serving t.gguf: no known pitfall" in out
    code, out, err = invoke(["doctor", "--check-command", CASES["renamed flag"][0]], capsys)
    assert code == 0 and "pitfall: renamed flag — --draft-max was renamed" in " ".join(out.split())


@pytest.mark.parametrize("command, words", [
    ("", "--check-command needs a command line"),
    ("vllm serve 'unclosed", "cannot split it into words (No closing quotation)"),
    ("ollama run qwen3", "not a llama-server, `vllm serve` or SGLang launch_server command"),
    ("vllm serve ./t --speculative-config '{method: mtp}'", "vLLM's --speculative-config is not JSON"),
])
def test_a_command_that_cannot_be_read_is_one_line(capsys, command, words):
    code, out, err = invoke(["doctor", "--check-command", command], capsys)
    assert_one_line(code, err, words)
