"""`doctor --for`: the draft the doctor would ship, played under each engine's own rules.

Kept apart from the doctor's run loop so that the loop only hands over what
it measured (traces, pooled costs, timing passes) and prints what comes back.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from .engines import Engine
from .rank import Prices, given_prices, measured_prices, own_best, rank_engine
from ..sim.cost_model import CostModel
from ..sim.sim_trace import SimTrace
from .report import DeployAdvice


class Measured(Protocol):
    """What the doctor measured of one draft (doctor/examine.py `Measured`, a room above this one): its
    traces, pooled cost model, prefills, and each timing pass's own (cost model, target-only s/token)."""

    @property
    def traces(self) -> Sequence[SimTrace]: ...

    @property
    def cost(self) -> CostModel: ...

    @property
    def passes(self) -> Sequence[tuple[CostModel, float]]: ...

    @property
    def prefill_s(self) -> Sequence[float]: ...


def prices_for(measured: Measured, costs: tuple[float, float] | None) -> Prices:
    """The user's --costs (draft_ms, verify_ms), else the doctor's pooled measurement with its timing passes."""
    if costs is not None:
        return given_prices(measured.traces, *costs)
    return measured_prices(measured.traces, measured.cost, measured.passes, measured.prefill_s)


def advise(target: str, draft: str, measured: Measured, engines: Sequence[Engine], gammas: Sequence[int], max_new: int,
           law: str = "greedy", costs: tuple[float, float] | None = None) -> DeployAdvice:
    """The doctor's: every engine's grid over the draft's traces, ranked, beside gammatune's own best policy."""
    return advise_traces(target, draft, measured.traces, prices_for(measured, costs), engines, gammas, max_new, law)


def advise_traces(target: str, draft: str, traces: Sequence[SimTrace], prices: Prices, engines: Sequence[Engine],
                  gammas: Sequence[int], max_new: int, law: str = "greedy") -> DeployAdvice:
    results = [rank_engine(e, traces, prices, gammas, max_new) for e in engines]
    return DeployAdvice(target, draft, law, results, own_best(traces, prices, gammas, max_new), prices)


__all__ = ["advise", "advise_traces", "prices_for"]
