"""The sampled-law check the heads share: many seeded runs of a head drafting for a tiny target, counted by their
first two tokens, for a chi-square test against the target's own joint law (test_sampling.py)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from test_sampling import N_SAMPLES, PROMPT_IDS


def two_token_counts(pair: Any, drafter: Any, cfg: SamplingConfig, vocab: int,
                     gamma: int = 2) -> tuple[Counter, int, int]:
    """(counts of the first two tokens as first * vocab + second, tokens accepted, windows with a rejection) over
    N_SAMPLES seeds: the second and third make sure both the accept test and the residual ran."""
    counts: Counter = Counter()
    accepted = rejected = 0
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma), dataclasses.replace(cfg, seed=seed),
                                 drafter=drafter)
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                accepted += ev.accepted
                rejected += ev.accepted < len(ev.drafted)
        counts[out[0] * vocab + out[1]] += 1
    return counts, accepted, rejected
