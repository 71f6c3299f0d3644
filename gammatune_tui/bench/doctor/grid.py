"""The doctor's grid: every method × γ0 as a speedup over the target alone, under one cost model.

Played once with the pooled cost model and once per timing pass, so every
number the doctor prints comes with the spread across passes. A γ0 outside
a policy's [γ_min, γ_max] would be overridden by that policy on its first
update (γ0 = 1 with γ_min = 4 becomes 4), so it is simulated — and
recommended — with the bounds widened to include it (`policy_bounds`): the
doctor never recommends a setting the policy would not keep.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ...engine.policies import METHODS, PolicyParams, PolicySettings
from ..sim import reference
from ..sim import simulate as sim
from ..sim.cost_model import CostModel
from ..sim.oracle import oracle_run
from ..results import RunRecord


def policy_bounds(method: str, gamma0: int) -> dict[str, int]:
    """The γ bounds to give with `--gamma gamma0` so that `method` keeps it (empty: the defaults already do)."""
    policy = PolicySettings.build(method, gamma0).make()
    if "gamma_min" not in getattr(type(policy), "uses", ()):
        return {}
    d = PolicyParams()
    out: dict[str, int] = {}
    if gamma0 < d.gamma_min:
        out["gamma_min"] = gamma0
    if gamma0 > d.gamma_max:
        out["gamma_max"] = gamma0
    return out


def bound_flags(method: str, gamma0: int) -> list[str]:
    """`--gamma-min N` / `--gamma-max N` as needed beside `--gamma gamma0` (see `policy_bounds`)."""
    return [f for k, v in policy_bounds(method, gamma0).items() for f in (f"--{k.replace('_', '-')}", str(v))]


def settings(method: str, gamma0: int) -> PolicySettings:
    return PolicySettings.build(method, gamma0, **policy_bounds(method, gamma0))


def speedup_grid(traces: Sequence[Any], cost: CostModel, plain_s: float, gammas: Sequence[int], max_new: int
                 ) -> tuple[dict[tuple[str, int], float], dict[tuple[str, int], list[RunRecord]], float]:
    """(method, γ0) → Σ target-only seconds / Σ simulated seconds, the records, and the oracle's speedup.

    The reference rows (bench/sim/reference.py) are in the grid too, keyed
    (name, γ): the best fixed γ in hindsight with its γ, the perfect
    acceptance signal and the oracle without skipping with γ 0.
    """
    grid: dict[tuple[str, int], float] = {}
    recs: dict[tuple[str, int], list[RunRecord]] = {}
    for m in METHODS:
        for g in gammas:
            rs = [sim.play_trace(t, settings(m, g).make(), max_new, cost) for t in traces]
            wall = sum(r.wall_s for r in rs)
            grid[(m, g)] = plain_s / wall if wall > 0 else math.nan  # the same tokens: the time ratio
            recs[(m, g)] = rs
    cap = reference.longest_window(traces)
    g, rs = reference.best_fixed(traces, cost, max_new, cap)
    refs = {(reference.BEST_FIXED, g): rs,
            (reference.SIGNAL, 0): [reference.signal_record(t, cost, max_new, cap) for t in traces],
            (reference.NO_SKIP, 0): [oracle_run(t, cost, max_new, min_window=1).record for t in traces]}
    for key, rs in refs.items():
        wall = sum(r.wall_s for r in rs)
        grid[key] = plain_s / wall if wall > 0 else math.nan
        recs[key] = rs
    o_wall = sum(oracle_run(t, cost, max_new).record.wall_s for t in traces)
    return grid, recs, (plain_s / o_wall if o_wall > 0 else math.nan)


def references(grid: dict[tuple[str, int], float], spread: dict[tuple[str, int], float]) -> list[list[Any]]:
    """[name, γ (0: none), speedup, spread] for each reference row of a grid, in the tables' order."""
    out = []
    for name in reference.REFERENCES:
        key = next((k for k in grid if k[0] == name), None)
        if key is not None:
            out.append([name, key[1], grid[key], spread.get(key, 0.0)])
    return out


def pass_spreads(traces: Sequence[Any], pooled: dict[tuple[str, int], float], oracle: float,
                 passes: Sequence[tuple[CostModel, float]], prefill_s: Sequence[float], gammas: Sequence[int],
                 max_new: int, per_pass: list | None = None) -> tuple[dict[tuple[str, int], float], float]:
    """Per (method, γ0), and for the oracle: the largest change of the speedup when one pass prices it instead.

    `per_pass`, if given, gets each pass's own grid (and the oracle under "oracle").
    """
    spread = {k: 0.0 for k in pooled}
    o_spread = 0.0
    for cost, plain_token_s in passes:
        plain_s = sum(pre + len(t.tokens) * plain_token_s for t, pre in zip(traces, prefill_s))
        grid, _, o = speedup_grid(traces, cost, plain_s, gammas, max_new)
        if per_pass is not None:
            per_pass.append({**grid, ("oracle", 0): o})
        for k, v in grid.items():
            if k[0] == reference.BEST_FIXED:  # the best γ may differ per pass: compare the row, not the γ
                k = next(j for j in pooled if j[0] == reference.BEST_FIXED)
            if math.isfinite(v) and math.isfinite(pooled[k]):
                spread[k] = max(spread[k], abs(v - pooled[k]))
        if math.isfinite(o) and math.isfinite(oracle):
            o_spread = max(o_spread, abs(o - oracle))
    return spread, o_spread


__all__ = ["bound_flags", "pass_spreads", "policy_bounds", "references", "settings", "speedup_grid"]
