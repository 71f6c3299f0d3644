"""The hindsight-optimal γ (`oracle`) on a greedy trace, and each method's regret against it.

Under greedy decoding a trace fixes, at every position, how long a run the
draft has matching the target and what it proposes after a miss. So the best
any window policy could have done with this draft and this cost model is a
shortest path: from position n, a window w costs what the simulator charges a
step that drafts d(n, w) tokens (w·T_draft + T_verify(w + 1) and the model's
per-step overheads, with d cut by a drafted EOS exactly as the decoder cuts it)
and moves to n + min(accepted + 1, tokens left). Every window from 0 (a plain
target step) up to the remaining budget − 1 is a candidate, longer than the
run or not: with a measured verify curve that is not monotone a longer window
can be the cheaper one, and leaving it out would let some policy beat the
"oracle". Whatever a policy drafts in a step, the oracle has that window too,
so it never loses to any policy on the same trace and cost model.

It is a bound for the simulator's tables, never a method a user can run: it
needs the target's answer before drafting. A method's **regret** is the share
of the oracle's speed it reaches on the same traces (1.0 = as fast as the
oracle), i.e. its speedup over any baseline divided by the oracle's.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ...engine.policies import Policy, PolicyParams
from .cost_model import CostModel, target_only_s
from ..results import RunRecord
from .trace_kinds import kind_of
from .model_trace import Trace
from .session_play import SimStep
from .sim_trace import SimTrace
from .simulate import play_trace

ORACLE = "oracle"


class WindowScript(Policy):
    """A policy that plays a given list of windows, one per step (0 = a plain target step).

    How the oracle's choice is priced: replaying it through the simulator
    gives its RunRecord exactly as any policy's. Not a method: only the
    simulator runs it.
    """

    name = ORACLE

    def __init__(self, windows: Sequence[int], name: str = ORACLE):
        self.name = name
        self.gamma0 = None  # type: ignore[assignment]
        self.params = PolicyParams()
        self.windows = [int(w) for w in windows]
        if any(w < 0 for w in self.windows):
            raise ValueError("windows must be >= 0")
        self._step = 0

    @property
    def gamma(self) -> int:  # type: ignore[override]
        if self._step >= len(self.windows):
            raise ValueError(f"the script holds {len(self.windows)} windows, but the session went on")
        return self.windows[self._step]

    def update(self, accepted: int, drafted: int, window: Sequence[Any] = ()) -> None:
        super().update(accepted, drafted)
        self._step += 1


@dataclass
class OracleRun:
    """The oracle on one trace: its window per step, the steps as the simulator plays them, the record."""

    prompt_id: str
    windows: list[int]
    steps: list[SimStep]
    record: RunRecord
    best_s: float  # the shortest path's own sum of step prices (equals the record's step time)

    @property
    def tokens_per_step(self) -> float:
        return self.record.tokens / self.record.steps if self.record.steps else 0.0


def _end(trace: Trace, max_new: int) -> int:
    if max_new > trace.max_new_tokens and not trace.ended_eos:
        raise ValueError(f"the trace was recorded with max_new_tokens={trace.max_new_tokens}, not {max_new}")
    return min(len(trace.tokens), max_new)


def step_options(trace: SimTrace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
    """(window, drafted, accepted, emitted) for every window 0 … wmax a trace of any kind can play from n."""
    return kind_of(trace).step_options(trace, n, wmax)


def oracle_run(trace: Trace, cost: CostModel, max_new_tokens: int | None = None,
               gamma_max: int | None = None, min_window: int = 0, name: str = ORACLE) -> OracleRun:
    """The cheapest sequence of windows over `trace` under `cost` (windows capped at `gamma_max` if given).

    `min_window` 1 is the oracle forbidden to skip drafting (a plain step only
    where the budget leaves no room for a draft): a reference row, named `name`.
    """
    max_new = trace.max_new_tokens if max_new_tokens is None else max_new_tokens
    if gamma_max is not None and gamma_max < 0:
        raise ValueError(f"gamma_max must be >= 0, got {gamma_max}")
    end = _end(trace, max_new)
    verify: dict[int, float] = {}

    def price(d: int, new: int) -> float:
        v = verify.get(d + 1)
        if v is None:
            v = verify[d + 1] = cost.verify(d + 1)
        return cost.draft(d) + v + cost.step_s + new * cost.emit_token_s

    best = [0.0] * (end + 1)
    choice = [0] * end
    for n in range(end - 1, -1, -1):
        wmax = max_new - n - 1
        if gamma_max is not None:
            wmax = min(wmax, gamma_max)
        best_n, best_w = math.inf, 0
        options = step_options(trace, n, max(wmax, 0))
        # no skipping: windows of at least min_window, unless the position offers nothing else
        options = [o for o in options if o[0] >= min_window] or options
        for w, d, _a, new in options:
            t = price(d, new) + best[n + new]
            if t < best_n:
                best_n, best_w = t, w
        best[n], choice[n] = best_n, best_w
    windows: list[int] = []
    n = 0
    while n < end:
        w = choice[n]
        windows.append(w)
        opt = next(o for o in step_options(trace, n, w) if o[0] == w)
        n += opt[3]
    steps: list[SimStep] = []
    record = play_trace(trace, WindowScript(windows, name), max_new, cost, steps)
    return OracleRun(trace.prompt_id, windows, steps, record, best[0])


def oracle_records(traces: Sequence[Trace], cost: CostModel, max_new_tokens: int | None = None,
                   gamma_max: int | None = None) -> list[RunRecord]:
    """One `oracle` RunRecord (kind "sim", γ0 None) per trace, to sit beside the methods' records."""
    return [oracle_run(t, cost, max_new_tokens, gamma_max).record for t in traces]


# -- regret ------------------------------------------------------------------------------------------


def _throughput(records: Iterable[RunRecord]) -> float:
    tokens = wall = 0.0
    for r in records:
        tokens += r.tokens
        wall += r.wall_s
    return tokens / wall if wall > 0 else math.nan


@dataclass(frozen=True)
class Regret:
    """Share of the oracle's throughput a method reaches: mean ± population std across γ0.

    `per_gamma` is that share at each γ0 over the whole prompt set (key None
    for a method without γ0, such as target-only); `per_category` the mean
    across γ0 of the share within each prompt category.
    """

    method: str
    mean: float
    std: float
    per_gamma: dict[int | None, float] = field(default_factory=dict)
    per_category: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "mean": self.mean, "std": self.std,
                "per_gamma": {("plain" if g is None else str(g)): v for g, v in self.per_gamma.items()},
                "per_category": dict(self.per_category)}

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.std:.2f}"


def regret(records: Iterable[RunRecord], oracle: Iterable[RunRecord],
           categories: Mapping[str, str] | None = None) -> dict[str, Regret]:
    """Each method's (and baseline's) share of the oracle's throughput, on the prompts it ran.

    The oracle's throughput is taken over exactly the prompts of the cell it
    is compared with, so a method run on a subset is not flattered or
    penalised by the others. Categories come from the prompt set
    (`Prompt.category`, keyed by prompt id); prompts without one are left out
    of the per-category shares.
    """
    by_prompt: dict[str, list[RunRecord]] = {}
    for r in oracle:
        by_prompt.setdefault(r.prompt_id, []).append(r)
    cells: dict[str, dict[int | None, list[RunRecord]]] = {}
    for r in records:
        if r.method == ORACLE:
            continue
        cells.setdefault(r.method, {}).setdefault(r.gamma0, []).append(r)

    def share(rs: list[RunRecord]) -> float:
        missing = sorted({r.prompt_id for r in rs} - set(by_prompt))
        if missing:
            raise ValueError(f"no oracle run for prompt {missing[0]!r}")
        ids = [r.prompt_id for r in rs]
        return _throughput(rs) / _throughput(o for p in ids for o in by_prompt[p][:1])

    cat_of = dict(categories or {})
    out: dict[str, Regret] = {}
    for method, by_g in cells.items():
        per_g = {g: share(rs) for g, rs in by_g.items()}
        vals = list(per_g.values())
        per_cat: dict[str, list[float]] = {}
        for rs in by_g.values():
            groups: dict[str, list[RunRecord]] = {}
            for r in rs:
                if cat_of.get(r.prompt_id):
                    groups.setdefault(cat_of[r.prompt_id], []).append(r)
            for c, group in groups.items():
                per_cat.setdefault(c, []).append(share(group))
        out[method] = Regret(method, statistics.fmean(vals), statistics.pstdev(vals) if len(vals) > 1 else 0.0,
                             per_g, {c: statistics.fmean(v) for c, v in sorted(per_cat.items())})
    return out


@dataclass(frozen=True)
class OracleSummary:
    """The oracle over a prompt set: tokens/step, mean window, modelled time and speedup over target-only."""

    prompts: int
    tokens: int
    steps: int
    drafted: int
    wall_s: float
    plain_s: float
    mean_window: float

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else 0.0

    @property
    def throughput(self) -> float:
        return self.tokens / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def speedup_over_plain(self) -> float:
        """Σ target-only seconds / Σ oracle seconds: the same tokens, so the throughput ratio."""
        return self.plain_s / self.wall_s if self.wall_s > 0 else math.nan

    def to_json(self) -> dict[str, Any]:
        return {"prompts": self.prompts, "tokens": self.tokens, "steps": self.steps, "drafted": self.drafted,
                "wall_s": self.wall_s, "plain_s": self.plain_s, "mean_window": self.mean_window,
                "tokens_per_step": self.tokens_per_step, "throughput": self.throughput,
                "speedup_over_plain": self.speedup_over_plain}


def summarize(traces: Sequence[Trace], runs: Sequence[OracleRun], cost: CostModel | None = None) -> OracleSummary:
    """Totals over the traces; target-only priced as the simulator's row is (`simulate.plain_records`)."""
    windows = [w for r in runs for w in r.windows]
    return OracleSummary(
        prompts=len(runs), tokens=sum(r.record.tokens for r in runs), steps=sum(r.record.steps for r in runs),
        drafted=sum(r.record.drafted for r in runs), wall_s=sum(r.record.wall_s for r in runs),
        plain_s=sum(target_only_s(t, cost) for t in traces), mean_window=statistics.fmean(windows) if windows else 0.0)
