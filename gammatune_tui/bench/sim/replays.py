"""Played sessions kept and priced again per cost model: the exact shortcut for the repeated plays.

`bench --simulate` prices every method × γ0 × prompt under the pooled cost
model (the Table 2 sweep), then `reference.share_rows` prices them again under
the pooled model and under each timing pass: five plays of each cell, 80 % of
the command's CPU. A policy that does not plan by cost (`plans_by_cost`
False: it never overrides `observe_costs`, so nothing it decides reads a
price) takes the same steps under every cost model; only `price_session`
differs. So its session is played once, kept with its window counts (drafted
d → steps, read from the step log), and each later request is a copy priced
by `price_session` under the model asked for: the same arithmetic on the same
counts, hence the same floats. A policy that plans by cost is played again
under each cost model (the memo keys it by the model, so the sweep's pooled
records still serve the pooled shares).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Hashable

from ...engine.policies import Policy
from .cost_model import CostModel
from ..results import RunRecord
from .session_play import SimStep, plans_by_cost, price_session, session_budget
from .sim_trace import SimTrace
from .simulate import play_trace


def priced(rec: RunRecord, windows: dict[int, int], cost: CostModel | None, session_s: float) -> RunRecord:
    """A copy of a played session priced by `cost` (unpriced, as a play without a model leaves it, when None)."""
    out = copy.copy(rec)
    out.pos_drafted, out.pos_accepted = list(rec.pos_drafted), list(rec.pos_accepted)
    if rec.output_ids is not None:
        out.output_ids = list(rec.output_ids)
    if cost is None:
        out.draft_s = out.verify_s = out.wall_s = 0.0
    price_session(out, windows, cost, session_s)
    return out


class Replays:
    """A memo of played sessions for one set of traces, keyed by trace, policy key, budget (and cost model for the
    policies that plan by cost). Live as long as the caller's sweep: it keeps the traces and cost models it has
    seen, so that their ids in its keys stay theirs."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], tuple[RunRecord, dict[int, int]]] = {}
        self._kept: dict[int, Any] = {}
        self._plans_by_cost: dict[Hashable, bool] = {}
        self.played = 0  # sessions actually played (the rest were priced again)

    def play(self, trace: SimTrace, make: Callable[[], Policy], key: Hashable, max_new_tokens: int | None,
             cost: CostModel | None) -> RunRecord:
        """`play_trace(trace, make(), max_new_tokens, cost)`, played only when no kept session gives it.

        `key` must name the policy `make` builds completely (e.g. its frozen `PolicySettings`).
        """
        policy = None
        by_cost = self._plans_by_cost.get(key)
        if by_cost is None:  # the policy is built once per key to ask, not per request (a script's windows cost)
            policy = make()
            by_cost = self._plans_by_cost[key] = plans_by_cost(policy)
        budget = session_budget(trace, max_new_tokens)
        k = (id(trace), key, budget, id(cost) if by_cost else None)
        hit = self._memo.get(k)
        if hit is None:
            policy = make() if policy is None else policy
            steps: list[SimStep] = []
            rec = play_trace(trace, policy, budget, cost, steps)
            windows: dict[int, int] = {}
            for s in steps:
                windows[s.drafted] = windows.get(s.drafted, 0) + 1
            self._kept[id(trace)], self._kept[id(cost)] = trace, cost
            self._memo[k] = hit = (rec, windows)
            self.played += 1
        return priced(hit[0], hit[1], cost, trace.session_s)

    def keep(self, trace: SimTrace, key: Hashable, max_new_tokens: int | None, cost: CostModel | None,
             rec: RunRecord, windows: dict[int, int]) -> None:
        """A session `play` would play for a policy that plans by cost, played elsewhere (another process: the
        same code on the same inputs): `play` then prices it instead of playing it."""
        self._plans_by_cost[key] = True
        k = (id(trace), key, session_budget(trace, max_new_tokens), id(cost))
        self._kept[id(trace)], self._kept[id(cost)] = trace, cost
        self._memo[k] = (rec, windows)

    def played_by_cost(self) -> list[tuple[Any, Hashable, int, Any, RunRecord, dict[int, int]]]:
        """(trace, key, budget, cost, record, windows) of every session played here for a policy that plans by cost."""
        return [(self._kept[t], key, budget, self._kept[c], *hit)
                for (t, key, budget, c), hit in self._memo.items() if c is not None]


__all__ = ["Replays", "priced"]
