"""What the simulator asks of a draft source's traces: the `TraceKind` protocol, and which kind a trace is.

A trace is what one prompt looks like to every greedy policy under one draft
source; how it is recorded, saved, replayed and searched by the oracle
depends on the source (a draft model's teacher-forced argmax and off-path
proposals, simulate.py's `Trace`; a source without a model, its proposal at
every position; a head, its whole chain from every position, head_trace.py).
`KINDS` lists every kind by import, one per draft source that the simulator
can trace, every head by the one head kind (the engine's rows, engine/common/names.py `SOURCES`,
cannot name a bench/ class: the engine imports nothing above it); the
simulator dispatches through the kind and never asks which source it holds.
A new source's kind is one file here and one `KINDS` entry; tests/bench/
test_trace_kinds.py checks each against `TraceKind` and the source rows.
The kinds import none of the modules that dispatch over them (simulate.py,
oracle.py, hindsight.py): model_trace.py holds what the model's kind shares
with them, so these imports make no circle.

A saved trace says its kind by its `kind` field, the source's name; a draft
model's traces, the first kind, carry none, so files saved before kept
their bytes.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence, TypeVar

from ...engine.common.names import MODEL, SOURCES, is_self_draft
from ...engine.common.pair import ModelPair
from ...engine.events import SessionHeader, StepEvent
from ...engine.policies import Policy
from ...errors import InvalidParameter
from ..results import RunRecord
from .cost_model import CostModel
from .session_play import SimStep
from . import lookup_trace, model_kind, pool_trace
from .head_trace import HeadKind, HeadTrace
from .lookup_trace import LookupTrace
from .model_trace import Trace
from .sim_trace import SimTrace

T = TypeVar("T")


class TraceKind(Protocol[T]):
    """One draft source's traces (of type T): record, save and load, replay, the oracle's options, a session's own."""

    name: str   # the source's name; a saved trace's `kind` (a draft model's traces have none)

    def record(self, pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, max_window: int,
               eos_ids: Iterable[int], params: dict[str, Any], header_s: float) -> T:
        """The greedy trace of one prompt, for windows up to `max_window`, with the source's `params`."""

    def from_json(self, d: dict[str, Any]) -> T:
        """A trace saved by its `to_json()`."""

    def play(self, trace: T, policy: Policy, max_new_tokens: int | None, cost: CostModel | None,
             steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None) -> RunRecord:
        """One session of `policy` over the trace with the decoder's exact rules (`simulate.play_trace`)."""

    def step_options(self, trace: T, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
        """(window, drafted, accepted, emitted) for every window 0 … wmax from position n (the oracle's)."""

    def from_session(self, pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> T | None:
        """The trace of a finished live session over its own text (the chat's hindsight); None where the
        source drafted from text the session's recording does not hold."""


# each kind checked by mypy against the protocol over its own trace type, then listed by its source's name
_MODEL: TraceKind[Trace] = model_kind.TRACE_KIND
_LOOKUP: TraceKind[LookupTrace] = lookup_trace.TRACE_KIND
_POOL: TraceKind[LookupTrace] = pool_trace.TRACE_KIND   # prompt lookup's traces under the pool's name
# a head that reads the target (traced, no draft model, not a point mass): its chains, under its own name
_HEADS: list[TraceKind[HeadTrace]] = [HeadKind(s.name) for s in SOURCES
                                      if s.has_traces and not s.loads_draft and not s.point_mass]
_ALL: list[TraceKind[Any]] = [_MODEL, _LOOKUP, _POOL, *_HEADS]
KINDS: dict[str, TraceKind[Any]] = {k.name: k for k in _ALL}


def trace_kind(source: str) -> TraceKind[Any]:
    """The trace kind of a draft source, by its name (a self-draft drafts as the model: `self:…` is the model's)."""
    kind = KINDS.get(MODEL if is_self_draft(source) else source)
    if kind is None:
        raise InvalidParameter(f"the simulator has no traces for drafter {source!r}")
    return kind


def kind_of(trace: SimTrace) -> TraceKind[Any]:
    """The kind of a trace in hand (its `kind`: the source's name)."""
    return trace_kind(trace.kind)


def trace_from_json(d: dict[str, Any]) -> SimTrace:
    """A saved trace of any kind."""
    return trace_kind(d.get("kind", MODEL)).from_json(d)


__all__ = ["KINDS", "TraceKind", "kind_of", "trace_from_json", "trace_kind"]
