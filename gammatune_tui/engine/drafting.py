"""Phase 1 of a step: the draft model proposes up to γ tokens, one forward each.

The policy sees each token's probabilities before the next is drafted (it
may stop the window early), so this loop pays one host sync per token; in
sampled mode it keeps each distribution q for the target's accept test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache

from .policies import Policy
from .sampling import Served, sample


@dataclass
class Draft:
    ids: list[int] = field(default_factory=list)
    top: list[float] = field(default_factory=list)  # the draft's highest probability at each position
    chosen: list[float] = field(default_factory=list)  # the draft's probability of the token it drafted
    q_rows: list[torch.Tensor] = field(default_factory=list)  # sampled mode only
    early: bool = False  # the policy ended the window before γ
    calls: int = 0


def draft_window(
    dfwd: Any, cache: DynamicCache, feed: list[int], window: int, *, policy: Policy, served: Served,
    gen: torch.Generator, vocab_cut: int | None, eos: frozenset[int], device: torch.device,
) -> Draft:
    """`feed` is what the draft has not cached yet; an EOS or a window of 0 ends drafting."""
    out = Draft()
    if window <= 0:
        return out
    greedy = served.greedy
    inp = torch.tensor([feed], device=device)
    while True:
        logits = dfwd(inp, cache, 1)[-1]
        out.calls += 1
        if vocab_cut is not None:
            logits = logits[:vocab_cut]
        logits = logits.float()
        if greedy:
            probs = torch.softmax(logits, dim=-1)
            top, x = probs.max(dim=-1)
            top_p, chosen_p, xi = torch.stack((top, top, x.to(top.dtype))).tolist()
        else:
            probs = served.probs(logits.unsqueeze(0))
            x = sample(probs, gen)
            top_p, chosen_p, xi = torch.stack((probs.max(), probs[0, x[0]], x[0].to(probs.dtype))).tolist()
            out.q_rows.append(probs[0])
        nxt = x.view(1, 1)
        xi = int(xi)
        out.ids.append(xi)
        out.top.append(top_p)
        out.chosen.append(chosen_p)
        keep = policy.keep_drafting(top_p, chosen_p)
        if len(out.ids) >= window or xi in eos:
            return out
        if not keep:
            out.early = True
            return out
        inp = nxt


__all__ = ["Draft", "draft_window"]
