"""Searching η, δ, τ and the γ bounds on recorded traces (for adaptive-k: its EMA weight, prior and cooldown).

Every candidate is scored by the exact simulator over all traces and every
γ0, exactly as Table 2 is computed: for each γ0, simulated throughput over the
mean specdecode throughput; score = mean − std_weight · std across γ0 (the
paper's claim is a higher mean *and* a lower spread). The search is
coordinate descent over small grids from the current defaults, repeated until
a full round changes nothing: a few hundred simulated sweeps, seconds to a
minute, instead of a full grid's thousands.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ...engine.policies.param_specs import PARAM_SPECS
from ...engine.policies import PolicyParams, PolicySettings, method_spec
from .cost_model import CostModel
from .simulate import Trace, play_trace

# each parameter's search grid, from its row in engine/policies/param_specs.py
GRID: dict[str, list[Any]] = {s.name: list(s.grid) for s in PARAM_SPECS if s.grid}


def tuned_names(method: str) -> tuple[str, ...]:
    """The parameters `tune` searches for `method` (its row in the method registry says)."""
    return method_spec(method).tuned_names()


@dataclass
class Score:
    params: dict[str, Any]
    mean: float
    std: float
    score: float
    per_gamma: dict[int, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"params": self.params, "mean": self.mean, "std": self.std, "score": self.score,
                "per_gamma": {str(g): v for g, v in self.per_gamma.items()}}


def throughput(traces: Sequence[Trace], method: str, gamma0: int, params: dict[str, Any], cost: CostModel,
               max_new_tokens: int | None = None) -> float:
    tokens = 0
    secs = 0.0
    for t in traces:
        r = play_trace(t, PolicySettings.build(method, gamma0, **params).make(), max_new_tokens, cost)
        tokens += r.tokens
        secs += r.wall_s
    return tokens / secs if secs > 0 else 0.0


def score(traces: Sequence[Trace], method: str, gammas: Sequence[int], params: dict[str, Any], cost: CostModel,
          base_mean: float, std_weight: float, max_new_tokens: int | None = None) -> Score:
    ratios = {g: throughput(traces, method, g, params, cost, max_new_tokens) / base_mean for g in gammas}
    m = statistics.fmean(ratios.values())
    s = statistics.pstdev(ratios.values()) if len(ratios) > 1 else 0.0
    return Score(dict(params), m, s, m - std_weight * s, ratios)


def current_defaults() -> dict[str, Any]:
    p = PolicyParams()
    return {s.name: s.to_json(getattr(p, s.name)) for s in PARAM_SPECS if s.grid}


def _valid(params: dict[str, Any], max_window: int) -> bool:
    return params["gamma_min"] <= params["gamma_max"] <= max_window


def tune(traces: Sequence[Trace], cost: CostModel, gammas: Sequence[int], method: str = "gammatune+",
         start: dict[str, Any] | None = None, std_weight: float = 1.0, max_rounds: int = 4,
         max_new_tokens: int | None = None, grid: dict[str, list[Any]] | None = None,
         progress: Callable[[int], None] | None = None) -> tuple[Score, Score, list[Score], float]:
    """(best, start, every scored candidate, seconds). `start` defaults to the shipped defaults."""
    t0 = time.perf_counter()
    grid = grid or GRID
    names = tuned_names(method)
    max_window = min(t.off_depth for t in traces) + 1
    base = [throughput(traces, "specdecode", g, {}, cost, max_new_tokens) for g in gammas]
    base_mean = statistics.fmean(base)
    seen: dict[tuple, Score] = {}

    def evaluate(p: dict[str, Any]) -> Score | None:
        key = tuple(p[k] for k in names)
        if key in seen:
            return seen[key]
        if not _valid(p, max_window):
            return None
        s = score(traces, method, gammas, p, cost, base_mean, std_weight, max_new_tokens)
        seen[key] = s
        if progress:
            progress(1)
        return s

    start_p = {**current_defaults(), **(start or {})}
    start_p["gamma_max"] = min(start_p["gamma_max"], max_window)
    first = evaluate(start_p)
    assert first is not None
    best = first
    for _ in range(max_rounds):
        improved = False
        for name in names:
            for v in grid[name]:
                cand = dict(best.params)
                cand[name] = v
                s = evaluate(cand)
                if s is not None and s.score > best.score + 1e-12:
                    best, improved = s, True
        if not improved:
            break
    return best, first, list(seen.values()), time.perf_counter() - t0
