"""`doctor --for`: the draft the doctor would ship, played under each engine's own rules.

Kept apart from the doctor's run loop so that the loop only hands over what
it measured (traces, pooled costs, timing passes) and prints what comes back.
"""

from __future__ import annotations

from typing import Any, Sequence

from .engines import Engine
from .rank import Prices, given_prices, measured_prices, own_best, rank_engine
from .report import DeployAdvice


def prices_for(measured: Any, costs: tuple[float, float] | None) -> Prices:
    """The user's --costs (draft_ms, verify_ms), else the doctor's pooled measurement with its timing passes."""
    if costs is not None:
        return given_prices(measured.traces, *costs)
    return measured_prices(measured.traces, measured.cost, measured.passes, measured.prefill_s)


def advise(target: str, draft: str, measured: Any, engines: Sequence[Engine], gammas: Sequence[int], max_new: int,
           law: str = "greedy", costs: tuple[float, float] | None = None) -> DeployAdvice:
    """The doctor's: every engine's grid over the draft's traces, ranked, beside gammatune's own best policy."""
    return advise_traces(target, draft, measured.traces, prices_for(measured, costs), engines, gammas, max_new, law)


def advise_traces(target: str, draft: str, traces: Sequence[Any], prices: Prices, engines: Sequence[Engine],
                  gammas: Sequence[int], max_new: int, law: str = "greedy") -> DeployAdvice:
    results = [rank_engine(e, traces, prices, gammas, max_new) for e in engines]
    return DeployAdvice(target, draft, law, results, own_best(traces, prices, gammas, max_new), prices)


__all__ = ["advise", "advise_traces", "prices_for"]
