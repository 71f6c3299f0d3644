"""Served distributions and the accept/reject rules (docs/spec.md §1.3).

`SamplingConfig` lives in sampling_config.py (no torch there, so the command
line refuses a bad --top-p or --temperature without loading torch) and is
re-exported here.
"""

from __future__ import annotations

import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from .devices import indexed, same_device
from .sampling_config import SamplingConfig


# -- served distributions -----------------------------------------------------------
#
# Everything below works on float32 logits of shape (n, vocab), one row per
# position, so a whole verification window is warped in one call.


class Served:
    """The distribution tokens are actually drawn from, for one SamplingConfig.

    It uses transformers' own warpers, in the order `generate()` applies them
    (temperature, top-k, top-p), so p and q here are exactly the laws
    `generate(do_sample=True, ...)` would sample from. The same object serves
    both models: that is the served-distribution parity of docs/spec.md §1.3.
    """

    def __init__(self, config: SamplingConfig):
        self.config = config
        self.greedy = config.greedy
        warpers: list = []
        if not self.greedy:
            if config.temperature != 1.0:
                warpers.append(TemperatureLogitsWarper(float(config.temperature)))
            if config.top_k:
                warpers.append(TopKLogitsWarper(top_k=int(config.top_k)))
            if config.top_p < 1.0:
                warpers.append(TopPLogitsWarper(top_p=float(config.top_p)))
        self._warpers = warpers

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """Served probabilities, (n, vocab). Greedy serves the raw softmax (what policies read)."""
        scores = logits
        for w in self._warpers:
            scores = w(None, scores)
        return torch.softmax(scores, dim=-1)


def make_generator(seed: int | None, device: torch.device | str) -> torch.Generator:
    """One generator per session, on the session's (indexed) device: draws never cross to the CPU.

    The same seed gives the same run on the same machine."""
    dev = indexed(device)
    try:
        gen = torch.Generator(device=dev)
    except RuntimeError:  # a backend without device generators: draw on the CPU
        gen = torch.Generator()
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(int(seed))
    return gen


def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One draw per row of `probs` (n, vocab) -> (n,) token ids.

    On CUDA torch.multinomial waits for the device (it checks the distribution
    on the host), which would cost a sync per drafted token; there the draw is
    the exponential race instead (`sample_without_sync`), which has the same law.
    A generator on another device than `probs` (a backend without device
    generators draws on the CPU) gets the draw made on its own device.
    """
    if not same_device(generator.device, probs.device):
        here = probs.device
        return sample(probs.to(generator.device), generator).to(here)
    if probs.device.type == "cuda":
        return sample_without_sync(probs, generator)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def sample_without_sync(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """argmax_i p_i / E_i with E_i ~ Exp(1) i.i.d.: token i wins with probability p_i / Σp, exactly.

    (E_i / p_i is exponential with rate p_i, and the smallest of independent
    exponentials is i with probability rate_i / Σ rates.) Device work only. A
    zero draw of E is lifted to the smallest positive float so 0/0 never occurs.
    """
    e = torch.empty(probs.shape, dtype=torch.float32, device=probs.device).exponential_(1.0, generator=generator)
    e.clamp_(min=torch.finfo(torch.float32).tiny)
    return (probs.float() / e).argmax(dim=-1)


def uniforms(n: int, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """n uniforms drawn on the generator's device, returned on `device` (no copy when they are the same)."""
    u = torch.rand(n, generator=generator, device=generator.device)
    return u if same_device(u.device, device) else u.to(device)


def leading_run(passed: torch.Tensor) -> torch.Tensor:
    """How many of a window's tests pass before the first failure, as a 0-dim long device tensor (no read).

    Greedy decoding's test is "the drafted token is the target's argmax",
    sampled decoding's `accepted_count`'s; verification.py applies either.
    """
    return torch.cumprod(passed.long(), dim=0).sum()


def accepted_count(p_chosen: torch.Tensor, q_chosen: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Accept drafted token i with probability min(1, p(x_i)/q(x_i)): the leading run of acceptances, on the device.

    One vector of uniforms for the whole window; u < p/q is tested as
    u·q < p so that p = q accepts surely.
    """
    n = p_chosen.shape[0]
    if n == 0:
        return torch.zeros((), dtype=torch.long, device=p_chosen.device)
    return leading_run(uniforms(n, generator, p_chosen.device) * q_chosen < p_chosen)


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p − q)): the correction law after a rejection (p itself where p ≤ q everywhere).

    Device work only: the fallback is chosen with `where`, not by reading the sum back."""
    r = torch.clamp(p - q, min=0.0)
    s = r.sum()
    return torch.where(s > 0, r / torch.where(s > 0, s, torch.ones_like(s)), p)


__all__ = [
    "SamplingConfig", "Served", "make_generator", "sample", "sample_without_sync", "leading_run", "accepted_count",
    "residual",
]
