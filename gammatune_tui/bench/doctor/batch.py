"""`doctor --batch`: the draft the doctor would ship, priced at each batch size a server would run it at.

The traces were recorded at batch 1 and stay what they are (acceptance is a
sequence's own); only the prices change with the batch. They are timed here
on the shipped pair, loaded again for it (the doctor drops each pair after its
draft is examined), unless the user gave a server's own (`--batch-costs`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..batch_prices import BatchCosts
from ..deploy.concurrency import Concurrency, predict
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
            prompt = pair.encode_prompt(cfg.prompts[0].text, raw=cfg.raw)
            context = len(prompt) + cfg.max_new_tokens // 2     # mid-answer, as the sessions' steps meet it
            costs = time_batches(pair.target, pair.draft, prompt, context, batches, [k + 1 for k in ks],
                                 pair.device, progress)
        finally:
            del pair
            free_memory(device)
    return predict(measured.traces, costs, ks, cfg.max_new_tokens)


__all__ = ["concurrency"]
