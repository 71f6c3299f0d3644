"""Warm-up after loading, so the first session a user sees runs at steady speed.

A fresh process pays for many things once: kernel and library
initialisation, allocator growth, lazy imports, compilation and (graphs
runner) one CUDA graph capture per (window, length bucket). On an H100 the
first generation ran 13× slower than the next (docs/architecture.md, "Measured facts"). This runs all of it
inside the loading phase, untimed: the runners' buffers are allocated at
`DEFAULT_CAPACITY` and started with the policy bound γ_max, which makes a
graphs runner compile its step and capture every graph its sessions can use
(runners/plan.py); every window length is run once through the very runners
the first session gets (on a device without graphs only the shortest and the
longest: there is nothing to capture); then short greedy and sampled sessions
exercise the decoder's own kernels (with the draft source the pair's
sessions use: the draft model, or prompt lookup for a pair loaded without
one). Its parts are timed into the pool's `timings` (`compile_s`,
`capture_s`, `warmup_s`) and, given `progress`, reported as loading stages.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

from ..common.pair import ModelPair
from ..decoder import SpeculativeDecoder
from ..policies import DEFAULT_GAMMA_MAX, PolicySettings
from ..runners import DEFAULT_CAPACITY, GraphRunner, runner_pool
from ..runners.plan import windows_for
from ..common.sampling import SamplingConfig
from ..common.vocab import shared_vocab

PROMPT_LEN = 8


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def warm_up(pair: ModelPair, gamma_max: int = DEFAULT_GAMMA_MAX,
            progress: Callable[[str, float], None] | None = None) -> float:
    """Warm the pair's runners and decoder; returns the seconds it took (also stored as `pair.warmup_s`).

    `progress(stage, fraction)`, if given, hears "compile" or "capture" (graphs runners only), then
    "warm-up" again, as they start."""
    t0 = time.perf_counter()
    report = progress or (lambda stage, frac: None)
    device = torch.device(pair.device)
    pool = runner_pool(pair)
    vocab = shared_vocab(pair.target, pair.draft)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (1, PROMPT_LEN + gamma_max + 2), generator=gen).to(device)
    runners = pool.acquire()
    graphs = [r for r in runners if isinstance(r, GraphRunner) and r.capture]
    try:
        if graphs:
            stage = "compile" if any(r._fixed is not None and r._fixed.compiled for r in graphs) else "capture"
            report(stage, 0.9)
            for r in graphs:  # the bar moves with every graph captured
                r.on_progress = lambda done, total, r=r: report(
                    "capture", 0.9 + 0.05 * (done / max(1, total) + (r is runners.draft)) / 2)
        for runner, role in ((runners.target, "target"), (runners.draft, "draft")):
            if runner is None:
                continue
            runner.start(DEFAULT_CAPACITY, gamma_max)  # a graphs runner compiles and captures here
            windows = windows_for(role, gamma_max)
            if runner not in graphs:
                windows = tuple(sorted({windows[0], windows[-1]}))
            runner.prefill(ids[:, :PROMPT_LEN])
            for q in windows:
                runner.forward(ids[:, PROMPT_LEN:PROMPT_LEN + q], q)
                runner.rewind(PROMPT_LEN)
    finally:
        for r in graphs:
            r.on_progress = None
        pool.release(runners)
    for r in graphs:
        pool.timings["compile_s"] = pool.timings.get("compile_s", 0.0) + r.compile_s
        pool.timings["capture_s"] = pool.timings.get("capture_s", 0.0) + r.capture_s
    if graphs:
        report("warm-up", 0.95)  # back from the compile/capture stages
    prompt = ids[0, :PROMPT_LEN].tolist()
    methods = ("specdecode", "gammatune+")  # the whole-window and the token-by-token draft loops
    samplings = (SamplingConfig(temperature=0.0), SamplingConfig(temperature=0.7, seed=0))  # 0.7: the demo default
    for sampling in samplings:
        for method in methods if device.type != "cpu" or sampling.greedy else methods[1:]:
            dec = SpeculativeDecoder(pair, PolicySettings.build(method, 4), sampling)
            for _ in dec.generate(prompt, max_new_tokens=8 if device.type != "cpu" else 4):
                pass
    _sync(device)
    seconds = time.perf_counter() - t0
    pool.timings["warmup_s"] = seconds
    try:
        pair.warmup_s = seconds
    except AttributeError:  # pragma: no cover - a frozen pair-like object
        pass
    return seconds


__all__ = ["warm_up"]
