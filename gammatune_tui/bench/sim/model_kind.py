"""The trace kind of a draft model's traces (trace_kinds.py): model_trace.py's `Trace`, recorded
(trace_record.py), replayed and searched (model_trace.py). It imports none of the modules that dispatch
over the kinds (simulate.py, oracle.py, hindsight.py), so trace_kinds.py can import it."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ...engine.common.names import MODEL
from ...engine.common.pair import ModelPair
from ...engine.events import SessionHeader, StepEvent
from ...engine.policies import Policy
from ..results import RunRecord
from .cost_model import CostModel
from .model_trace import Trace, model_step_options, play_model_trace
from .session_play import SimStep
from . import trace_record


class ModelKind:
    """A draft model's greedy traces: its teacher-forced argmax and what it proposes after a miss."""

    name = MODEL

    def record(self, pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, max_window: int,
               eos_ids: Iterable[int], params: dict[str, Any], header_s: float) -> Trace:
        # a window of w drafts at most w - 1 tokens past a miss
        return trace_record.record_trace(pair, prompt_id, prompt_ids, max_new_tokens, max_window - 1, eos_ids, header_s)

    def from_json(self, d: dict[str, Any]) -> Trace:
        return Trace.from_json(d)

    def play(self, trace: Trace, policy: Policy, max_new_tokens: int | None, cost: CostModel | None,
             steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None) -> RunRecord:
        return play_model_trace(trace, policy, max_new_tokens, cost, steps_out, timings)

    def step_options(self, trace: Trace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
        return model_step_options(trace, n, wmax)

    def from_session(self, pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> Trace:
        return trace_record.session_trace(pair, header, steps)


TRACE_KIND = ModelKind()

__all__ = ["ModelKind", "TRACE_KIND"]
