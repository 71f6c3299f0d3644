"""What a step costs when a server runs B sequences at once, timed on the user's own models here.

At batch 1 a verify of K + 1 tokens costs little more than one token (the
weights are read once either way), which is why speculation pays. A server
batching B requests verifies B × (K + 1) tokens a step: as B grows the pass
turns from reading weights to computing, the K extra tokens stop being free,
and speculation stops paying (vLLM #26504: +23 % at batch 1, −16 % at 32,
acceptance unchanged). Acceptance is a property of each sequence and comes
from the traces; what changes with B is only these prices, so they are what
is timed: one target forward of B sequences × k new tokens over a shared
context, and one draft forward of B × 1, at every batch size asked.

Each forward runs over a cache prefilled once per batch size and cut back to
the context after every timing, so every k is timed at the same context. The
sizes are timed in rounds, each round every (B, k) once in turn, so that a
busy spell slows one round rather than one batch size; the rounds give the
spread. A model whose cache cannot be cut back (hybrid state) is refused in
one line: its batched verify cannot be timed this way.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Callable, Sequence

import torch

from ...engine.runners.hf_compat import cache_kw, output_cache
from ...errors import InvalidParameter
from ..batch_prices import BatchCosts

if TYPE_CHECKING:   # transformers loads with the pair
    from transformers import Cache, PreTrainedModel

REPEATS = 3       # timings of one (B, k) in a round; their median is the round's
ROUNDS = 3        # rounds over every (B, k); their spread is the timing spread


def _cache_of(model: PreTrainedModel, ids: torch.Tensor) -> Cache:
    with torch.no_grad():
        cache = output_cache(model(input_ids=ids, use_cache=True))
    if cache is None or not callable(getattr(cache, "crop", None)):
        raise InvalidParameter(f"--batch: {type(model).__name__}'s cache cannot be cut back (hybrid state), so its "
                               "batched verify cannot be timed here")
    return cache


def _timed(model: PreTrainedModel, cache: Cache, context: int, new: torch.Tensor) -> float:
    """One forward of `new` (B × k) over the cache, then the cache cut back to `context`: its seconds.

    With an attention mask over the whole row, as a server's ragged batch carries one (its rows end at different
    lengths), so the forward takes the masked path a live batch takes, not the unmasked causal shortcut."""
    mask = torch.ones(new.shape[0], context + new.shape[1], dtype=torch.long, device=new.device)
    with torch.no_grad():
        t0 = time.perf_counter()
        model(input_ids=new, attention_mask=mask, **cache_kw(model, cache), use_cache=True)
        dt = time.perf_counter() - t0
    cache.crop(-new.shape[1])   # transformers 5: a negative count drops that many tokens
    return dt


def _median(fn: Callable[[], float]) -> float:
    fn()  # warm: the first forward at a new shape allocates
    return statistics.median(fn() for _ in range(REPEATS))


def time_batches(target: PreTrainedModel, draft: PreTrainedModel | None, prompt_ids: Sequence[int], context: int,
                 batches: Sequence[int], windows: Sequence[int], device: torch.device | str = "cpu",
                 progress: Callable[[str], None] = lambda _: None) -> BatchCosts:
    """Every batch size's target step, verifies of each window k (tokens per sequence), and draft step.

    `prompt_ids` tiled to `context` tokens stand for each sequence's text; the
    content does not move a forward's time, its length does.
    """
    if not prompt_ids:
        raise InvalidParameter("--batch: no prompt to time the batched forwards with")
    row = (list(prompt_ids) * (context // len(prompt_ids) + 1))[:context]
    out = BatchCosts(context)
    models = [("target", target)] + ([("draft", draft)] if draft is not None else [])
    caches: dict[tuple[str, int], Cache] = {}
    for b in batches:
        ids = torch.tensor([row] * b, device=device)
        for name, model in models:
            progress(f"prefilling batch {b} ({name})")
            caches[(name, b)] = _cache_of(model, ids)
    ks = sorted({1, *windows})
    for r in range(ROUNDS):
        for b in batches:
            progress(f"timing batch {b}, round {r + 1} of {ROUNDS}")
            for k in ks:
                new = torch.tensor([row[-k:]] * b, device=device)
                s = _median(lambda: _timed(target, caches[("target", b)], context, new))
                out.verify_s.setdefault(b, {}).setdefault(k, []).append(s)
                if k == 1:
                    out.step_s.setdefault(b, []).append(s)
            one = torch.tensor([row[-1:]] * b, device=device)
            d = _median(lambda: _timed(draft, caches[("draft", b)], context, one)) if draft is not None else 0.0
            out.draft_s.setdefault(b, []).append(d)
    return out


__all__ = ["ROUNDS", "time_batches"]
