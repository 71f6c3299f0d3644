"""Warm-up after loading, so the first session a user sees runs at steady speed.

A fresh process pays for many things once: kernel and library
initialisation, allocator growth, lazy imports, the runners' self-checks,
and (graphs runner) one CUDA graph capture per window length. On an H100
the first generation ran 13× slower than the next (DESIGN.md). This runs all
of it inside the loading phase, untimed: the runners' buffers are allocated
at `DEFAULT_CAPACITY`, every window length a session will use by default is
run once through the very runners the first session gets (the draft's 1 and
2, the target's 1 … γ_max + 1: this captures the graphs), then a short greedy
and a short sampled session exercise the decoder's own kernels (with the
draft source the pair's sessions use: the draft model, or prompt lookup for
a pair loaded without one).
"""

from __future__ import annotations

import time
from typing import Any

import torch

from .decoder import SpeculativeDecoder
from .policies import DEFAULT_GAMMA_MAX, PolicySettings
from .runners import DEFAULT_CAPACITY, runner_pool
from .sampling import SamplingConfig

PROMPT_LEN = 8


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def warm_up(pair: Any, gamma_max: int = DEFAULT_GAMMA_MAX) -> float:
    """Warm the pair's runners and decoder; returns the seconds it took (also stored as `pair.warmup_s`)."""
    t0 = time.perf_counter()
    device = torch.device(getattr(pair, "device", None) or pair.target.device)
    pool = runner_pool(pair)
    draft = getattr(pair, "draft", None)
    vocab = int(pair.target.config.vocab_size if draft is None else min(pair.target.config.vocab_size,
                                                                           draft.config.vocab_size))
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (1, PROMPT_LEN + gamma_max + 2), generator=gen).to(device)
    runners = pool.acquire()
    try:
        for runner, windows in ((runners.target, range(1, gamma_max + 2)), (runners.draft, (1, 2))):
            if runner is None:
                continue
            runner.start(DEFAULT_CAPACITY)
            runner.prefill(ids[:, :PROMPT_LEN])
            for q in windows:
                runner.forward(ids[:, PROMPT_LEN:PROMPT_LEN + q], q)
                runner.rewind(PROMPT_LEN)
    finally:
        pool.release(runners)
    prompt = ids[0, :PROMPT_LEN].tolist()
    for sampling in (SamplingConfig(temperature=0.0), SamplingConfig(temperature=0.7, seed=0)):  # 0.7: the demo default
        for method in ("specdecode", "gammatune+"):  # the whole-window and the token-by-token draft loops
            dec = SpeculativeDecoder(pair, PolicySettings.build(method, 4), sampling)
            for _ in dec.generate(prompt, max_new_tokens=8):
                pass
    _sync(device)
    seconds = time.perf_counter() - t0
    try:
        pair.warmup_s = seconds
    except AttributeError:  # pragma: no cover - a frozen pair-like object
        pass
    return seconds


__all__ = ["warm_up"]
