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

import atexit  # noqa: E402
import shutil  # noqa: E402

os.environ["GAMMATUNE_CACHE_DIR"] = tempfile.mkdtemp(prefix="gammatune-test-cache-")
# each test process converts SmolLM2 into it (about 0.5 GB): gone when the process ends, or runs fill the disk
atexit.register(shutil.rmtree, os.environ["GAMMATUNE_CACHE_DIR"], ignore_errors=True)

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


# `make check` runs `-m "not slow"`; `make test` runs everything. Marked here, in one place, rather than
# file by file: a test is slow when it checks a sampling law (a chi-square test over thousands of draws:
# its name says "law"), or is one of the tests below, each timed at 2 s or more by `pytest --durations`
# on 2 shared cores (with other jobs running) and paying for a whole process, torch.compile or the demo
# pair. A fast test that grows slow belongs here, with what makes it slow.
SLOW_NAMES = ("law",)
SLOW_TESTS = (
    "tests/engine/test_runner_compile.py",                      # torch.compile: 14 s
    "tests/engine/test_source_registry.py::test_a_new_source",  # a CLI and a decoder in a child process: 14 s
    "tests/engine/test_ngram_pool.py::test_greedy_over_two_turns",   # the demo pair, two turns each: 7-10 s
    "tests/engine/test_hf_readme.py",                           # the README's example in a child process: 6 s
    "tests/engine/test_pending_window.py::test_the_policy_learns_every_kept_token",   # 5 s
    "tests/engine/test_hybrid_runner.py::test_greedy_output_is_generates_with_every_drafter",   # 3 s each
    "tests/families/",                                          # every family on every path: minutes
)


def pytest_collection_modifyitems(items):
    for item in items:
        if any(w in item.name for w in SLOW_NAMES) or item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
