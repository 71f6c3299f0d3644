"""What benchmarks/dflash_step.py, eagle3_step.py and gemma4_assistant_step.py share (mtp_step.py its
default_dtype): a target built at a real model's shape with random weights, its one-token decode step timed against
a cache cut back after each timing (so every timing meets the same context), and that step timed in alternation with
a head's step, so that a busy spell of the machine slows both a little rather than one a lot."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, Iterator

# Qwen3-1.7B's config: the 1-2B target of issue 45's step goals
QWEN3_1P7B = dict(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True,
                  max_position_embeddings=4096)


def build_target(model_type: str, fields: dict[str, Any], dtype: Any, device: Any = "cpu") -> Any:
    """A causal LM of `model_type` with `fields`, random weights, built on `device` (a 1.7B random init on the
    host is slow) in `dtype`; prints how long that took and the machine's state."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    cfg = AutoConfig.for_model(model_type, **fields)
    t0 = time.perf_counter()
    with torch.device(device):
        target = AutoModelForCausalLM.from_config(cfg, dtype=dtype).eval()
    print(f"# target built in {time.perf_counter() - t0:.0f} s; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, load {os.getloadavg()[0]:.2f}", flush=True)
    return target


@contextlib.contextmanager
def default_dtype(dtype: Any) -> Iterator[None]:
    """Write a head in the target's dtype (its writer builds the model with torch's default dtype)."""
    import torch

    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)


def target_step(target: Any, cache: Any, device: Any = "cpu") -> Callable[[], float]:
    """A timer of one decode step of `target` over `cache`, which is cut back to where it was after each timing
    (transformers 5.24: a negative crop removes that many tokens)."""
    import torch
    from gpu_steps import sync   # a timing ends when the GPU's queued work does

    device = torch.device(device)
    token = torch.tensor([[5]], device=device)

    def step() -> float:
        sync(device)
        t = time.perf_counter()
        target(token, cache=cache, use_cache=True)
        sync(device)
        dt = time.perf_counter() - t
        cache.crop(-1)
        return dt
    return step


def alternate(first: Callable[[], float], second: Callable[[], float], *, warm: int,
              repeats: int) -> tuple[list[float], list[float]]:
    """Both timers `warm` times untimed, then `repeats` times each in alternation: (first's, second's) seconds."""
    for _ in range(warm):
        first()
        second()
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeats):
        a.append(first())
        b.append(second())
    return a, b
