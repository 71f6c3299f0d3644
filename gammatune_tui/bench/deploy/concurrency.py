"""Speculation under concurrency: the best K at each batch size, and the batch size where speculation stops paying.

A server running B requests takes one step for all of them: it drafts K
tokens for each (K draft forwards of B × 1) and verifies B × (K + 1) tokens in
one target forward. How many tokens a sequence gains per step is its own
acceptance, which batching does not change (the traces give it, played at a
fixed K as vLLM and SGLang run it); what batching changes is the price of the
step. So a batch size's speed-up at K is

    (tokens per step at K) × (step(B) + over(B, 1))
        / (draft₁(B) + (K − 1) × draft(B) + verify(B, K + 1) + over(B, K + 1))

with the forwards and each step's work around them (`over`: masks,
positions, argmax, acceptance, read-back) timed at that B by running the
step itself (bench/live/batch_costs.py), or given by the server's own
measurement. draft₁ is a step's first draft forward, which also reads what
the draft has not yet (two tokens after a fully accepted window). K = 0 (no
speculation) is 1× by definition and always a candidate. Left out, and said
so in docs/deploy.md: scheduling, prefill (its own and interleaved with
decode), requests of unequal length, and a paged cache.
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
    plain_s: float = math.nan          # a step of the target alone, its overhead in
    spec_s: float = math.nan           # a speculative step at K: drafts, verify and its overhead
    plain_overhead_s: float = 0.0      # of which the work outside the forwards
    spec_overhead_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"batch": self.batch, "k": self.k, "speedup": _num(self.speedup), "spread": _num(self.spread),
                "prompt_range": [_num(self.lo), _num(self.hi)],
                "step_ms": {"target_alone": _num(self.plain_s * 1e3), "speculative": _num(self.spec_s * 1e3)},
                "overhead_ms": {"target_alone": _num(self.plain_overhead_s * 1e3),
                                "speculative": _num(self.spec_overhead_s * 1e3)}}


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


def _speedup(tps: float, plain: float, first: float, draft: float, verify: float, k: int) -> float:
    """`plain` and `verify` with their steps' overhead already in."""
    wall = first + (k - 1) * draft + verify
    return tps * plain / wall if wall > 0 and math.isfinite(tps) else math.nan


def _summed(forward: list[float], overhead: list[float]) -> list[float]:
    """Each round's forward plus its overhead (one overhead for every round where only one was given)."""
    return [x + y for x, y in zip(forward, overhead * len(forward) if len(overhead) == 1 else overhead)]


def tokens_per_step(traces: Sequence[Any], ks: Sequence[int], max_new: int) -> tuple[dict[int, float],
                                                                                     dict[int, list[float]]]:
    """Each trace played at each fixed K: tokens per step pooled over the traces, and per trace."""
    per_trace: dict[int, list[float]] = {}
    pooled: dict[int, float] = {}
    for k in ks:
        recs = [sim.play_trace(t, PolicySettings.build("specdecode", k).make(), max_new) for t in traces]
        per_trace[k] = [r.tokens / r.steps if r.steps else math.nan for r in recs]
        steps = sum(r.steps for r in recs)
        pooled[k] = sum(r.tokens for r in recs) / steps if steps else math.nan
    return pooled, per_trace


def mid_answer(pooled: dict[int, float], max_new: int) -> dict[int, tuple[int, int]]:
    """K → (columns, real columns) past the prompt in a row's cache halfway through a `max_new`-token answer, as a
    ragged batch keeps it: the target alone adds one column a token (K = 0); a speculative step K + 1, whatever it
    kept, so at K its cache is longer by the rejected (masked) columns."""
    half = max_new // 2
    out = {0: (half, half)}
    for k, tps in pooled.items():
        steps = math.ceil(half / tps) if math.isfinite(tps) and tps > 0 else half
        out[k] = (steps * (k + 1), half)
    return out


def predict(traces: Sequence[Any], costs: BatchCosts, ks: Sequence[int], max_new: int) -> Concurrency:
    """Each trace played at each fixed K (its tokens and steps), priced at each batch size by `costs`."""
    ks = sorted({k for k in ks if k > 0})
    notes = []
    missing = [k + 1 for k in ks for b in costs.batches if k + 1 not in costs.verify_s.get(b, {})]
    if missing:
        ks = [k for k in ks if all(k + 1 in costs.verify_s.get(b, {}) for b in costs.batches)]
        notes.append(f"no verify price for windows {sorted(set(missing))}: those K are left out")
    if costs.given and not any(costs.overhead_s.values()):
        notes.append("your --batch-costs gives no overhead_ms: each step is priced from its forwards alone")
    pooled, per_trace = tokens_per_step(traces, ks, max_new)
    cells: dict[tuple[int, int], Cell] = {}
    med = statistics.median
    for b in costs.batches:
        plain_r = _summed(costs.step_s[b], costs.overhead(b, 1))
        first_r, draft_r = costs.first_draft(b), costs.draft_s[b]
        plain, first, draft = med(plain_r), med(first_r), med(draft_r)
        for k in ks:
            ver_r = _summed(costs.verify_s[b][k + 1], costs.overhead(b, k + 1))
            ver = med(ver_r)
            s = _speedup(pooled[k], plain, first, draft, ver, k)
            rounds = [_speedup(pooled[k], p, f, d, v, k) for p, f, d, v in zip(plain_r, first_r, draft_r, ver_r)]
            spread = max((abs(v - s) for v in rounds if math.isfinite(v)), default=0.0)
            pp = [_speedup(t, plain, first, draft, ver, k) for t in per_trace[k]]
            pp = [v for v in pp if math.isfinite(v)]
            cells[(b, k)] = Cell(b, k, s, spread, min(pp, default=math.nan), max(pp, default=math.nan),
                                 plain, first + (k - 1) * draft + ver, med(costs.overhead(b, 1)),
                                 med(costs.overhead(b, k + 1)))
    return Concurrency(cells, list(costs.batches), ks, pooled, costs, notes)


__all__ = ["Cell", "Concurrency", "PAYS_ABOVE", "mid_answer", "predict", "tokens_per_step"]
