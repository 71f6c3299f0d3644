"""Speculation under concurrency: the best K at each batch size, and the batch size where speculation stops paying.

A server running B requests takes one step for all of them: it drafts K
tokens for each (K draft forwards of B × 1) and verifies B × (K + 1) tokens in
one target forward. How many tokens a sequence gains per step is its own
acceptance, which batching does not change (the traces give it, played at a
fixed K as vLLM and SGLang run it); what batching changes is the price of the
step. So a batch size's speed-up at K is

    (tokens per step at K) × step(B) / (K × draft(B) + verify(B, K + 1))

with step, draft and verify timed at that B (bench/live/batch_costs.py) or
given by the server's own measurement. K = 0 (no speculation) is 1× by
definition and always a candidate. Left out, and said so in docs/deploy.md:
scheduling, prefill interleaved with decode, requests of unequal length, the
draft model re-reading the accepted tokens, and a paged cache.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...engine.policies import PolicySettings
from ..batch_prices import BatchCosts
from ..sim import simulate as sim

PAYS_ABOVE = 1.0           # a K pays where its speed-up over the target alone is above this


@dataclass(frozen=True)
class Cell:
    """One (batch size, K): the predicted speed-up over the target alone at that batch size."""

    batch: int
    k: int
    speedup: float           # priced with each cost's median over the timing rounds
    spread: float            # the largest change when one timing round prices it alone
    lo: float                # over prompts: the lowest and highest
    hi: float

    def to_json(self) -> dict[str, Any]:
        return {"batch": self.batch, "k": self.k, "speedup": _num(self.speedup), "spread": _num(self.spread),
                "prompt_range": [_num(self.lo), _num(self.hi)]}


def _num(v: float) -> float | None:
    return round(v, 4) if math.isfinite(v) else None


@dataclass
class Concurrency:
    """Every (batch size, K) cell, and what follows from them."""

    cells: dict[tuple[int, int], Cell]
    batches: list[int]
    ks: list[int]                                   # K > 0 tried; K = 0 is the target alone
    tokens_per_step: dict[int, float]               # K → pooled over the traces
    costs: BatchCosts
    notes: list[str] = field(default_factory=list)

    def best(self, batch: int) -> Cell:
        """The K with the highest speed-up at this batch size, K = 0 where none is above 1."""
        top = max((self.cells[(batch, k)] for k in self.ks), key=lambda c: c.speedup, default=None)
        if top is None or not top.speedup > PAYS_ABOVE:
            return Cell(batch, 0, 1.0, 0.0, 1.0, 1.0)
        return top

    def ties(self, batch: int) -> list[int]:
        """The Ks whose speed-up is within the timing spread of the best (0 included where the best is near 1)."""
        b = self.best(batch)
        out = [k for k in self.ks if abs(self.cells[(batch, k)].speedup - b.speedup) <= b.spread
               + self.cells[(batch, k)].spread]
        if b.k == 0 or b.speedup - b.spread <= PAYS_ABOVE:
            out.append(0)
        return sorted(set(out) | {b.k})

    def crossover(self) -> int | None:
        """The smallest batch size asked from which on speculation does not pay (best K = 0), None if it pays at
        every batch size asked."""
        for i, b in enumerate(self.batches):
            if all(self.best(x).k == 0 for x in self.batches[i:]):
                return b
        return None

    def vllm_schedule(self) -> list[list[int]]:
        """vLLM's `num_speculative_tokens_per_batch_size`: [[bs_lo, bs_hi, K], …], from 1, ranges merged where K
        repeats; vLLM applies the last K to every larger batch (vllm/v1/spec_decode/dynamic/utils.py)."""
        rows: list[list[int]] = []
        for i, b in enumerate(self.batches):
            lo = 1 if i == 0 else b
            hi = self.batches[i + 1] - 1 if i + 1 < len(self.batches) else b
            k = self.best(b).k
            if rows and rows[-1][2] == k:
                rows[-1][1] = hi
            else:
                rows.append([lo, hi, k])
        return rows

    def sglang_tiers(self) -> dict[str, dict[str, list[int]]]:
        """SGLang's `--speculative-adaptive-config` (python/sglang/srt/speculative/adaptive_spec_params.py): one
        slot per batch size asked, its candidate steps the best K and those tied with it, so its EMA moves only
        among steps the prediction cannot tell apart."""
        return {str(b): {"candidate_steps": self.ties(b)} for b in self.batches}

    def to_json(self) -> dict[str, Any]:
        return {"batches": self.batches, "ks": self.ks,
                "tokens_per_step": {str(k): _num(v) for k, v in self.tokens_per_step.items()},
                "cells": [c.to_json() for c in self.cells.values()],
                "best": {str(b): self.best(b).to_json() for b in self.batches},
                "crossover_batch": self.crossover(),
                "vllm_num_speculative_tokens_per_batch_size": self.vllm_schedule(),
                "sglang_adaptive_config": self.sglang_tiers(),
                "costs": self.costs.to_json(), "notes": self.notes}


def _speedup(tps: float, step: float, draft: float, verify: float, k: int) -> float:
    wall = k * draft + verify
    return tps * step / wall if wall > 0 and math.isfinite(tps) else math.nan


def predict(traces: Sequence[Any], costs: BatchCosts, ks: Sequence[int], max_new: int) -> Concurrency:
    """Each trace played at each fixed K (its tokens and steps), priced at each batch size by `costs`."""
    ks = sorted({k for k in ks if k > 0})
    notes = []
    missing = [k + 1 for k in ks for b in costs.batches if k + 1 not in costs.verify_s.get(b, {})]
    if missing:
        ks = [k for k in ks if all(k + 1 in costs.verify_s.get(b, {}) for b in costs.batches)]
        notes.append(f"no verify price for windows {sorted(set(missing))}: those K are left out")
    per_trace: dict[int, list[float]] = {}
    pooled: dict[int, float] = {}
    for k in ks:
        recs = [sim.play_trace(t, PolicySettings.build("specdecode", k).make(), max_new) for t in traces]
        per_trace[k] = [r.tokens / r.steps if r.steps else math.nan for r in recs]
        steps = sum(r.steps for r in recs)
        pooled[k] = sum(r.tokens for r in recs) / steps if steps else math.nan
    cells: dict[tuple[int, int], Cell] = {}
    for b in costs.batches:
        med = statistics.median
        step, draft = med(costs.step_s[b]), med(costs.draft_s[b])
        for k in ks:
            ver = costs.verify_s[b][k + 1]
            s = _speedup(pooled[k], step, draft, med(ver), k)
            rounds = [_speedup(pooled[k], st, d, v, k) for st, d, v in zip(costs.step_s[b], costs.draft_s[b], ver)]
            spread = max((abs(v - s) for v in rounds if math.isfinite(v)), default=0.0)
            pp = [_speedup(t, step, draft, med(ver), k) for t in per_trace[k]]
            pp = [v for v in pp if math.isfinite(v)]
            cells[(b, k)] = Cell(b, k, s, spread, min(pp, default=math.nan), max(pp, default=math.nan))
    return Concurrency(cells, list(costs.batches), ks, pooled, costs, notes)


__all__ = ["Cell", "Concurrency", "PAYS_ABOVE", "predict"]
