"""`doctor --batch`: the draft the doctor would ship, priced at each batch size a server would run it at.

The traces were recorded at batch 1 and stay what they are (acceptance is a
sequence's own); only the prices change with the batch. They are timed here
on the shipped pair, loaded again for it (the doctor drops each pair after its
draft is examined), unless the user gave a server's own (`--batch-costs`):
the doctor's prompts cycled to each batch size, each row's cache halfway
through the answer at the length the traces say a ragged batch reaches at
each K, and the step run as live batched decoding runs it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..batch_prices import BatchCosts
from ..deploy.concurrency import Concurrency, mid_answer, predict, tokens_per_step
from ..live.batch_costs import time_batches
from .examine import Candidate, DoctorConfig, Measured, free_memory, load


def concurrency(cfg: DoctorConfig, cand: Candidate, measured: Measured, batches: Sequence[int],
                given: BatchCosts | None, progress: Callable[[str], None]) -> Concurrency:
    ks = [g for g in cfg.gammas if g > 0]
    if given is not None:
        costs = given
    else:
        progress("loading the pair for batched timing")
        pair = load(cfg, cand)
        device = str(pair.device)
        try:
            prompts = [pair.encode_prompt(p.text, raw=cfg.raw) for p in cfg.prompts]
            answer = mid_answer(tokens_per_step(measured.traces, ks, cfg.max_new_tokens)[0], cfg.max_new_tokens)
            pad = pair.tokenizer.pad_token_id
            costs = time_batches(pair.target, pair.draft, prompts, answer, batches, ks, pair.device, progress,
                                 pad=pad if pad is not None else 0)
        finally:
            del pair
            free_memory(device)
    return predict(measured.traces, costs, ks, cfg.max_new_tokens)


__all__ = ["concurrency"]
