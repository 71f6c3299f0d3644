"""After a greedy session: the trace of its own text, and how close it came to the oracle.

`session_hindsight` is the `HindsightHook` (session/hindsight.py) that `run`
and `chat` hand their sessions. Its trace costs one teacher-forced draft pass
over the prompt and the generated text (the session's tokens *are* the
target's greedy continuation, so no target pass is needed); what the draft
proposes after its own wrong token is taken from the session's steps, which
drafted exactly that, so every window the session played is one the oracle
can play too. The cost model is calibrated on the session's own step timings
(`cost_model.calibrate`), and the session's steps and the oracle's are priced
by it alike: the share compares choices of window, not clocks. A prompt-lookup
session needs no model at all: its proposals are recomputed from its own text.
"""

from __future__ import annotations

import time
from typing import Sequence

from ...engine.common.names import BY_SOURCE, MODEL
from ...engine.common.pair import ModelPair
from ...engine.events import Event, SessionHeader, StepEvent
from ...session.hindsight import Hindsight, not_applicable
from .cost_model import CostModel, calibrate
from .oracle import oracle_run
from .trace_kinds import trace_kind
from .trace_record import session_trace  # noqa: F401 (a draft model's session trace; tests import it from here)


def step_price(cost: CostModel, drafted: int, emitted: int) -> float:
    """What the simulator charges one step (bench/sim/simulate.py's `play_trace`, without the session's fixed part)."""
    return cost.draft(drafted) + cost.verify(drafted + 1) + cost.step_s + emitted * cost.emit_token_s


def session_hindsight(pair: ModelPair, events: Sequence[Event]) -> Hindsight:
    """The session's share of the oracle's modelled speed on its own text (the `HindsightHook`)."""
    t0 = time.perf_counter()
    na = not_applicable(events)
    if na is not None:
        return na
    header = next(e for e in events if isinstance(e, SessionHeader))
    steps = [e for e in events if isinstance(e, StepEvent)]
    spec = BY_SOURCE.get(header.drafter or MODEL)
    if spec is not None and not spec.has_traces:   # a head (mtp): its chained drafts have no replay yet
        return Hindsight.unavailable(f"none for {header.drafter}: the simulator has no trace kind for it yet",
                                     "no oracle for this drafter")
    trace = trace_kind(header.drafter or MODEL).from_session(pair, header, steps)
    if trace is None:   # the source drafted from text the recording does not hold (an earlier turn's)
        return Hindsight.unavailable(f"none for {header.drafter}, which drafts from earlier turns too (a "
                                     "session's recording does not hold them)", "no oracle for this drafter")
    cost = calibrate(events)
    best = oracle_run(trace, cost, max_new_tokens=len(trace.tokens))
    mine = sum(step_price(cost, len(s.drafted), len(s.emitted)) for s in steps)
    n = len(trace.tokens)
    windows = best.windows
    return Hindsight(
        applicable=True, share=best.best_s / mine if mine > 0 else float("nan"), tokens=n,
        session_steps=len(steps), oracle_steps=len(windows), session_tokens_per_step=n / len(steps),
        oracle_tokens_per_step=n / len(windows) if windows else 0.0,
        oracle_mean_window=sum(windows) / len(windows) if windows else 0.0,
        oracle_plain_steps=sum(w == 0 for w in windows), session_modelled_s=mine, oracle_modelled_s=best.best_s,
        session_measured_s=sum(s.step_s for s in steps), check_s=time.perf_counter() - t0)
