"""Each engine's grid played over one draft's traces, ranked by predicted speedup over the target alone.

The same traces, cost model and timing passes as the doctor's own grid
(bench/doctor/grid.py, which sits above this room and hands them down), so an engine's best setting and gammatune's best
policy are priced alike and can be set side by side: each number comes with
its spread across timing passes (the largest change when one pass prices it
instead of the pool) and its range over prompts. With `--costs` the prices
are the user's (a flat verify curve: one target forward whatever the
window, batch 1), and there is no timing spread to give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...engine.policies import METHODS, PolicySettings
from ..results import RunRecord
from ..sim import simulate as sim
from ..sim.cost_model import CostModel, target_only_s
from ..sim.ranks import gap_ranks
from .engines import Engine, Setting


@dataclass(frozen=True)
class Prices:
    """What the predictions are priced with: the pooled cost model and target-only seconds per prompt, and the
    same for each timing pass (none when the user gave the costs)."""

    cost: CostModel
    plain_s: list[float]                          # target-only seconds per trace
    passes: list[tuple[CostModel, list[float]]] = field(default_factory=list)
    given: bool = False                           # --costs: the user's prices, not this machine's


def given_prices(traces: Sequence[Any], draft_ms: float, verify_ms: float) -> Prices:
    """--costs draft_ms,verify_ms: a drafted token costs draft_ms, any verify pass one target forward (verify_ms),
    and the target alone verify_ms per token; nothing else (batch 1, no prefill, no host overhead)."""
    cost = CostModel(draft_token_s=draft_ms / 1000, verify_s={1: verify_ms / 1000})
    return Prices(cost, [len(t.tokens) * verify_ms / 1000 for t in traces], given=True)


def measured_prices(traces: Sequence[Any], cost: CostModel, passes: Sequence[tuple[CostModel, float]],
                    prefill_s: Sequence[float]) -> Prices:
    """The doctor's pooled prices (traces already priced by `with_target_costs`) and each pass's own."""
    per_pass = [(c, [pre + len(t.tokens) * tok_s for t, pre in zip(traces, prefill_s)]) for c, tok_s in passes]
    return Prices(cost, [t.plain_s for t in traces], per_pass)


def sim_prices(traces: Sequence[Any], cost: CostModel, passes: Sequence[CostModel]) -> Prices:
    """`bench --simulate`'s prices: its pooled cost model and each timing pass's, target-only priced by each."""
    def plain(c: CostModel) -> list[float]:
        return [target_only_s(t, c) for t in traces]
    return Prices(cost, plain(cost), [(c, plain(c)) for c in passes])


@dataclass
class Row:
    """One setting over the prompt set."""

    setting: Setting
    speedup: float                # Σ target-only seconds / Σ predicted seconds
    spread: float                 # largest change when one timing pass prices it instead of the pool
    low: float                    # the lowest and highest prompt's speedup
    high: float
    mean_acceptance_length: float  # vLLM's: 1 + accepted drafts / steps that drafted

    def to_json(self) -> dict[str, Any]:
        return {"knobs": self.setting.knobs, "default": self.setting.default, "speedup": _num(self.speedup),
                "spread": self.spread, "prompt_low": _num(self.low), "prompt_high": _num(self.high),
                "mean_acceptance_length": _num(self.mean_acceptance_length)}


@dataclass
class EngineResult:
    engine: Engine
    rows: list[Row]               # best first
    ranks: dict[str, str]         # setting label → rank ("1", "2=")

    @property
    def best(self) -> Row:
        return self.rows[0]

    @property
    def default(self) -> Row | None:
        return next((r for r in self.rows if r.setting.default), None)


def _num(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _ratio(plain: float, wall: float) -> float:
    return plain / wall if wall > 0 else math.nan


def play_row(setting: Setting, traces: Sequence[Any], prices: Prices, max_new: int) -> Row:
    recs = [setting.play(t, max_new, prices.cost) for t in traces]
    speedup = _ratio(sum(prices.plain_s), sum(r.wall_s for r in recs))
    spread = 0.0
    for cost, plain in prices.passes:
        v = _ratio(sum(plain), sum(setting.play(t, max_new, cost).wall_s for t in traces))
        if math.isfinite(v) and math.isfinite(speedup):
            spread = max(spread, abs(v - speedup))
    per_prompt = [_ratio(p, r.wall_s) for p, r in zip(prices.plain_s, recs)]
    return Row(setting, speedup, spread, min(per_prompt, default=math.nan), max(per_prompt, default=math.nan),
               mean_acceptance_length(recs))


def mean_acceptance_length(recs: Sequence[RunRecord]) -> float:
    """vLLM's mean acceptance length over records: 1 + accepted / steps that drafted (the bonus token included)."""
    drafts = sum(r.pos_drafted[0] for r in recs if r.pos_drafted)
    return 1 + sum(r.accepted for r in recs) / drafts if drafts else math.nan


def rank_engine(engine: Engine, traces: Sequence[Any], prices: Prices, gammas: Sequence[int],
                max_new: int) -> EngineResult:
    """Every setting of the engine's grid, best first; ties (=) where the gap is within the timing spread."""
    rows = [play_row(s, traces, prices, max_new) for s in engine.grid(gammas)]
    rows.sort(key=lambda r: -r.speedup if math.isfinite(r.speedup) else math.inf)
    ranks = gap_ranks({r.setting.label: r.speedup for r in rows}, {r.setting.label: r.spread for r in rows})
    return EngineResult(engine, rows, ranks)


@dataclass(frozen=True)
class OwnBest:
    """gammatune's own best policy under the same prices."""

    method: str
    gamma0: int
    speedup: float
    spread: float


def _speedup(method: str, gamma0: int, traces: Sequence[Any], cost: CostModel, plain_s: Sequence[float],
             max_new: int) -> float:
    settings = PolicySettings.build(method, gamma0)   # bounds widen to keep γ0, as the doctor's grid plays it
    return _ratio(sum(plain_s), sum(sim.play_trace(t, settings.make(), max_new, cost).wall_s for t in traces))


def own_best(traces: Sequence[Any], prices: Prices, gammas: Sequence[int], max_new: int) -> OwnBest:
    """Every gammatune method at every γ0 under `prices` (as the doctor's grid plays them), the best one."""
    grid = {(m, g): _speedup(m, g, traces, prices.cost, prices.plain_s, max_new) for m in METHODS for g in gammas}
    key = max(grid, key=lambda k: grid[k] if math.isfinite(grid[k]) else -1)
    spread = 0.0
    for cost, plain in prices.passes:
        v = _speedup(*key, traces, cost, plain, max_new)
        if math.isfinite(v) and math.isfinite(grid[key]):
            spread = max(spread, abs(v - grid[key]))
    return OwnBest(key[0], key[1], grid[key], spread)


__all__ = ["EngineResult", "OwnBest", "Prices", "Row", "given_prices", "measured_prices", "mean_acceptance_length",
           "own_best", "play_row", "rank_engine", "sim_prices"]
