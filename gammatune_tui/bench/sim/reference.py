"""Reference rows beside the oracle, and every share of the oracle with its spread.

A share of the oracle's throughput reads only against neighbours: so the
tables add three rows played on the same traces and cost model —

* **best fixed γ in hindsight**: `specdecode` at the one γ (1 … the longest
  window) that is fastest over all prompts together; what a user who knew
  the prompt set could ship;
* **perfect acceptance signal** (a bound, not causal): told whether each next
  draft token will be accepted, it drafts exactly the tokens that will be
  accepted (up to the longest window) and stops before the first rejection;
* **oracle, no skip**: the oracle forbidden to skip drafting (every window ≥ 1).

Each share comes with two spreads: across timing passes (the pooled cost
model prices the share; each pass's model prices it again: ± the largest
difference) and across prompts (the per-prompt shares' population std). A
row is ranked below another only when the gap exceeds the larger spread
(`ranks.gap_ranks`), with spread = the pass spread + the standard error over
prompts.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...engine.policies import PolicySettings
from .cost_model import CostModel
from .oracle import ORACLE, WindowScript, oracle_run, step_options
from .ranks import gap_ranks
from ..results import RunRecord
from .replays import Replays
from .sim_trace import SimTrace
from .simulate import play_trace

BEST_FIXED = "best fixed γ"
SIGNAL = "perfect signal"
NO_SKIP = "oracle, no skip"
REFERENCES = (BEST_FIXED, SIGNAL, NO_SKIP)


def longest_window(traces: Sequence[Any]) -> int:
    """The longest window every trace can replay (a draft trace's off-path depth + 1; a lookup trace's depth)."""
    return min((t.off_depth + 1) if hasattr(t, "off_depth") else t.depth for t in traces)


def signal_windows(trace: SimTrace, cap: int, max_new: int) -> list[int]:
    """The perfect signal's window per step: the longest all-accepted window (≤ cap) from each position."""
    end = min(len(trace.tokens), max_new)
    n = 0
    out: list[int] = []
    while n < end:
        wmax = max(0, min(cap, max_new - n - 1))
        best = (0, 1)
        for w, d, a, new in step_options(trace, n, wmax):
            if a == d == w and w >= best[0]:
                best = (w, new)
        out.append(best[0])
        n += best[1]
    return out


def signal_record(trace: SimTrace, cost: CostModel | None, max_new: int, cap: int,
                  replays: Replays | None = None) -> RunRecord:
    """The perfect signal's session; its script reads no cost, so `replays` plays it once for every cost model."""
    def make() -> WindowScript:
        return WindowScript(signal_windows(trace, cap, max_new), SIGNAL)

    if replays is None:
        return play_trace(trace, make(), max_new, cost)
    return replays.play(trace, make, (SIGNAL, cap), max_new, cost)


def _thr(recs: Sequence[RunRecord]) -> float:
    wall = sum(r.wall_s for r in recs)
    return sum(r.tokens for r in recs) / wall if wall > 0 else math.nan


def best_fixed(traces: Sequence[Any], cost: CostModel, max_new: int, cap: int,
               replays: Replays | None = None) -> tuple[int, list[RunRecord]]:
    """The fixed γ (specdecode) fastest over all prompts together, and its records."""
    replays = replays or Replays()
    best: tuple[float, int, list[RunRecord]] = (-math.inf, 1, [])
    for g in range(1, cap + 1):
        s = PolicySettings.build("specdecode", g)
        recs = [replays.play(t, s.make, s, max_new, cost) for t in traces]
        thr = _thr(recs)
        if thr > best[0]:
            best = (thr, g, recs)
    return best[1], best[2]


@dataclass
class ShareRow:
    """One method's (or reference's) share of the oracle: pooled, per timing pass, per prompt."""

    name: str
    share: float
    passes: list[float] = field(default_factory=list)
    prompts: list[float] = field(default_factory=list)
    reference: bool = False
    detail: str = ""  # e.g. the best fixed γ
    rank: str = ""

    @property
    def pass_spread(self) -> float:
        return max((abs(p - self.share) for p in self.passes), default=0.0)

    @property
    def prompt_std(self) -> float:
        return statistics.pstdev(self.prompts) if len(self.prompts) > 1 else 0.0

    @property
    def spread(self) -> float:
        """What a gap must exceed to rank: the pass spread + the standard error over prompts."""
        n = len(self.prompts)
        return self.pass_spread + (self.prompt_std / math.sqrt(n) if n > 1 else 0.0)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.detail})" if self.detail else self.name

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "detail": self.detail, "reference": self.reference, "share": self.share,
                "passes": self.passes, "pass_spread": self.pass_spread, "prompt_std": self.prompt_std,
                "spread": self.spread, "rank": self.rank, "per_prompt": self.prompts}


Entry = Any  # a method name (played with the common parameters) or (label, method, its own parameters)


def _shares(traces: Sequence[Any], cost: CostModel, methods: Sequence[Entry], gammas: Sequence[int],
            params: dict[str, Any], max_new: int, cap: int, replays: Replays
            ) -> dict[str, tuple[float, list[float], str]]:
    """name → (share over all prompts, per-prompt shares, detail) under one cost model."""
    oracle = [oracle_run(t, cost, max_new).record for t in traces]
    o_all = _thr(oracle)
    o_one = [_thr([r]) for r in oracle]
    out: dict[str, tuple[float, list[float], str]] = {}

    def put(name: str, per_set: list[list[RunRecord]], detail: str = "") -> None:
        # a method's share is the mean over its γ0 sets (as the per-γ0 tables); a reference has one set
        total = statistics.fmean(_thr(recs) / o_all for recs in per_set)
        per_prompt = [statistics.fmean(_thr([recs[i]]) / o_one[i] for recs in per_set) for i in range(len(traces))]
        out[name] = (total, per_prompt, detail)

    for entry in methods:
        label, m, p = (entry, entry, params) if isinstance(entry, str) else entry
        settings = [PolicySettings.build(m, g, **p) for g in gammas]
        put(label, [[replays.play(t, s.make, s, max_new, cost) for t in traces] for s in settings])
    g, recs = best_fixed(traces, cost, max_new, cap, replays)
    put(BEST_FIXED, [recs], f"γ = {g}")
    put(SIGNAL, [[signal_record(t, cost, max_new, cap, replays) for t in traces]])
    put(NO_SKIP, [[oracle_run(t, cost, max_new, min_window=1, name=NO_SKIP).record for t in traces]])
    return out


def share_rows(traces: Sequence[Any], pooled: CostModel, passes: Sequence[CostModel], methods: Sequence[Entry],
               gammas: Sequence[int], params: dict[str, Any] | None = None, max_new: int | None = None,
               cap: int | None = None, replays: Replays | None = None) -> list[ShareRow]:
    """Every method (mean over γ0) and the reference rows, as shares of the oracle with their spreads and ranks.

    Each session is played once and priced under the pooled model and each pass (`replays.Replays`: exact; the
    policies that plan by cost are played per model); pass the sweep's `replays` to reuse its pooled plays too.
    """
    params = params or {}
    replays = replays if replays is not None else Replays()
    max_new = max_new if max_new is not None else min(t.max_new_tokens for t in traces)
    cap = min(cap, longest_window(traces)) if cap is not None else longest_window(traces)
    main = _shares(traces, pooled, methods, gammas, params, max_new, cap, replays)
    per_pass = [_shares(traces, c, methods, gammas, params, max_new, cap, replays) for c in passes]
    rows = [ShareRow(name, share, [p[name][0] for p in per_pass], prompts, name in REFERENCES, detail)
            for name, (share, prompts, detail) in main.items()]
    ranks = gap_ranks({r.name: r.share for r in rows}, {r.name: r.spread for r in rows})
    for r in rows:
        r.rank = ranks[r.name]
    return sorted(rows, key=lambda r: -r.share)


__all__ = ["BEST_FIXED", "SIGNAL", "NO_SKIP", "REFERENCES", "ORACLE", "ShareRow", "best_fixed", "longest_window",
           "share_rows", "signal_record", "signal_windows"]
