"""Shared fixtures: tiny random-weight Llama pairs saved like real model dirs (seconds, no downloads).

Add fixtures here additively; the engine's are:
  tiny_pair_dirs  -> (target_dir, draft_dir): byte-level tokenizer (259 ids), noisy draft
  tiny_pair       -> ModelPair loaded from those dirs with load_pair (cpu, float32)
  micro_pair      -> ModelPair over an 8-token vocabulary, for exact-law tests
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# bench --simulate keeps traces in the user's cache: never the real one from a test run
import tempfile  # noqa: E402

os.environ["GAMMATUNE_CACHE_DIR"] = tempfile.mkdtemp(prefix="gammatune-test-cache-")

import pytest  # noqa: E402

from tiny_models import make_byte_tokenizer, make_llama, make_word_tokenizer, noisy_copy  # noqa: E402,F401


@pytest.fixture(scope="session")
def tiny_pair_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_pair")
    tok = make_byte_tokenizer()
    target = make_llama(len(tok), seed=1, init=1.0)
    draft = noisy_copy(target, seed=2, scale=0.15)
    out = []
    for name, model in (("target", target), ("draft", draft)):
        d = root / name
        model.save_pretrained(d)
        tok.save_pretrained(d)
        out.append(d)
    return tuple(out)


@pytest.fixture(scope="session")
def tiny_pair(tiny_pair_dirs):
    from gammatune_tui.engine.loading.models import load_pair

    t, d = tiny_pair_dirs
    return load_pair(str(t), str(d), device="cpu", dtype="float32", threads=1)


MICRO_WORDS = list("abcdefgh")


@pytest.fixture(scope="session")
def micro_pair():
    """8-token vocabulary, no EOS; the draft's output layer is noisy so q differs clearly from p."""
    import torch

    from gammatune_tui.engine.loading.models import ModelPair

    tok = make_word_tokenizer(MICRO_WORDS)
    target = make_llama(len(MICRO_WORDS), seed=11, init=0.6, eos=None, bos=None, layers=1)
    draft = noisy_copy(target, seed=12, scale=0.8)
    return ModelPair(target=target, draft=draft, tokenizer=tok, device=torch.device("cpu"),
                     dtype=torch.float32, name_target="micro-target", name_draft="micro-draft",
                     eos_ids=frozenset({-1}))
