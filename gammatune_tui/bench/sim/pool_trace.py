"""The n-gram pool's trace kind (trace_kinds.py): prompt lookup's traces, under the pool's name.

`bench` runs every prompt in a decoder of its own, so a pool there holds one
prompt's text and proposes exactly what prompt lookup proposes
(engine/drafting/ngram_pool.py): its traces are prompt lookup's, recorded,
played and searched the same way (lookup_trace.py), and say `ngram-pool` as
their kind so that each source keeps its own. A chat turn's pool also held the
earlier turns, which its recording does not keep: a live session has no
trace here, and its hindsight says so.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

from ...engine.common.pair import ModelPair
from ...engine.events import SessionHeader, StepEvent
from ...engine.policies import Policy
from ..results import RunRecord
from .cost_model import CostModel
from .lookup_trace import TRACE_KIND as COPY_KIND
from .lookup_trace import LookupTrace as CopiedTrace   # the copying kind's trace, which the pool's traces are
from .session_play import SimStep

NAME = "ngram-pool"


class PoolKind:
    name = NAME

    def record(self, pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, max_window: int,
               eos_ids: Iterable[int], params: dict[str, Any], header_s: float) -> CopiedTrace:
        trace = COPY_KIND.record(pair, prompt_id, prompt_ids, max_new_tokens, max_window, eos_ids, params, header_s)
        return dataclasses.replace(trace, kind=NAME)

    def from_json(self, d: dict[str, Any]) -> CopiedTrace:
        return COPY_KIND.from_json(d)

    def play(self, trace: CopiedTrace, policy: Policy, max_new_tokens: int | None, cost: CostModel | None,
             steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None) -> RunRecord:
        return COPY_KIND.play(trace, policy, max_new_tokens, cost, steps_out, timings)

    def step_options(self, trace: CopiedTrace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
        return COPY_KIND.step_options(trace, n, wmax)

    def from_session(self, pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> None:
        return None


TRACE_KIND = PoolKind()

__all__ = ["PoolKind", "TRACE_KIND"]
