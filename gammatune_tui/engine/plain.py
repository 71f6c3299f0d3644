"""Plain target-only decoding: the reference every speedup is measured against.

A comparison of γ policies says which policy is fastest, but not whether
speculation pays at all on this machine; only the target decoding alone, one
token per forward pass, on the same prompt, sampling settings and forward
path, says that. It runs the target through the pair's own runner (the one
the decoder uses: eager, static or graphs) with the decoder's served
distribution, so the two differ only in speculation. Greedy output is
the target's own text: the tokens every lossless method must reproduce.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import torch

from .common.pair import ModelPair
from .context import check_context
from .logits_processing import session_processors, wrap_runner
from .runners import runner_pool
from .common.sampling import SamplingConfig, Served, make_generator, sample


@dataclass
class PlainRun:
    """One target-only generation: its tokens and time (prefill included, as a session's wall time is)."""

    token_ids: list[int] = field(default_factory=list)
    wall_s: float = 0.0
    stop_reason: str = "max_new_tokens"

    @property
    def tokens(self) -> int:
        return len(self.token_ids)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0


def plain_decode(pair: ModelPair, prompt_ids: Sequence[int], max_new_tokens: int,
                 sampling: SamplingConfig | None = None) -> PlainRun:
    """The target alone, KV-cached, one token per forward; greedy or sampled as `sampling` says."""
    ids = [int(i) for i in prompt_ids]
    check_context(pair, len(ids), max_new_tokens)
    sampling = sampling or SamplingConfig()
    target = pair.target
    device = torch.device(pair.device)
    served = Served(sampling)
    gen = make_generator(sampling.seed, device)
    draft = pair.draft  # None: a pair loaded for prompt lookup has the target alone
    vocab = int(target.config.vocab_size if draft is None else min(target.config.vocab_size, draft.config.vocab_size))
    eos = set(pair.eos_ids)
    run = PlainRun()
    pool = runner_pool(pair)
    runners = pool.acquire()
    try:
        # the same processors as the speculative sessions (a repetition penalty): the reference is their law
        trun = wrap_runner(runners.target, session_processors(sampling, None))
        t0 = time.perf_counter()
        trun.start(len(ids) + max_new_tokens)
        if len(ids) > 1:
            trun.prefill(torch.tensor([ids[:-1]], device=device))
        last = ids[-1]
        while run.tokens < max_new_tokens:
            logits = trun.forward(torch.tensor([[last]], device=device), 1)[-1:, :vocab]
            if served.greedy:
                last = int(logits.argmax(-1))
            else:
                last = int(sample(served.probs(logits.float()), gen)[0])
            run.token_ids.append(last)
            if last in eos:
                run.stop_reason = "eos"
                break
        run.wall_s = time.perf_counter() - t0
    finally:
        pool.release(runners)
    return run


def plain_step_seconds(pair: ModelPair, sampling: SamplingConfig | None = None, steps: int = 24,
                       prompt_len: int = 8) -> float:
    """The median seconds of one plain target step (a one-token forward and the choice of its token).

    What plain target-only decoding costs a token on this machine now, without
    the prefill: the figure a live chat sets its own speed against (compare
    measures the same through `plain_decode`). The tokens are the target's
    own, from a short fixed prompt; EOS does not end the timing (the text is
    not used)."""
    sampling = sampling or SamplingConfig()
    target = pair.target
    device = torch.device(pair.device)
    served = Served(sampling)
    gen = make_generator(sampling.seed, device)
    draft = pair.draft
    vocab = int(target.config.vocab_size if draft is None else min(target.config.vocab_size, draft.config.vocab_size))
    ids = [(7 * k + 3) % vocab for k in range(prompt_len)]
    check_context(pair, len(ids), steps)
    pool = runner_pool(pair)
    runners = pool.acquire()
    times: list[float] = []
    try:
        trun = runners.target
        trun.start(len(ids) + steps)
        trun.prefill(torch.tensor([ids[:-1]], device=device))
        last = ids[-1]
        for _ in range(steps):
            t0 = time.perf_counter()
            logits = trun.forward(torch.tensor([[last]], device=device), 1)[-1:, :vocab]
            if served.greedy:
                last = int(logits.argmax(-1))     # int() waits for the device: the step is timed whole
            else:
                last = int(sample(served.probs(logits.float()), gen)[0])
            times.append(time.perf_counter() - t0)
    finally:
        pool.release(runners)
    times.sort()
    return times[len(times) // 2]


__all__ = ["PlainRun", "plain_decode", "plain_step_seconds"]
