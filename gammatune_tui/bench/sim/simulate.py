"""The exact trace simulator for greedy speculative decoding.

Under greedy decoding the accepted text is always a prefix of the target's own
greedy continuation, so everything a live run can observe is fixed in advance:

* the continuation itself (computed with the KV-cached, one-token-at-a-time
  path the target uses when decoding on its own; recorded by trace_record.py);
* at every position, the draft's argmax, top-1 probability and entropy given
  that prefix (one teacher-forced draft pass; greedy ⇒ chosen = top-1);
* after each position where the draft disagrees, what the draft would go on
  proposing from its own wrong token (needed only to know when an
  early-stopping policy stops and whether the draft runs into EOS).

`play_trace` then runs any policy over a trace with the decoder's exact rules
(engine/policies/step_rule.py: window = min(γ, remaining − 1); drafting stops at the
window, at a drafted EOS, or after a token the policy rejects, which stays in
the draft; EOS and the budget cut the emitted run; the policy learns as the
decoder's does) and charges each step from a measured
`CostModel`. Floating-point caveat, reported rather than hidden: a live run's
logits come from chunked cached passes, the trace's from other shapes of the
same computation, and a near-tie argmax can flip. `Trace.fragile` counts the
positions whose top-2 logit gap is small enough for that to happen, and
`validate_live` compares a simulated run with a live one step by step.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Hashable, Iterable, Protocol, Sequence

from ...engine.policies import Policy, PolicySettings
from ..results import RunRecord
from .cost_model import CostModel, target_only_s
from .model_trace import Trace, TraceTooShallow, _aux, play_model_trace  # noqa: F401 (simulate.Trace: the name callers use)
from .session_play import SimStep
from .sim_trace import SimTrace
from .trace_kinds import kind_of


def play_trace(trace: SimTrace, policy: Policy, max_new_tokens: int | None = None,
               cost: CostModel | None = None, steps_out: list[SimStep] | None = None,
               timings: Sequence[tuple[float, float]] | None = None) -> RunRecord:
    """One session of `policy` over a trace of any kind, played by its kind (trace_kinds.py)."""
    return kind_of(trace).play(trace, policy, max_new_tokens, cost, steps_out, timings)


class SessionMemo(Protocol):
    """What the sweep asks of `replays.Replays` (which imports this module, so it is not named here)."""

    def play(self, trace: SimTrace, make: Callable[[], Policy], key: Hashable, max_new_tokens: int | None,
             cost: CostModel | None) -> RunRecord: ...


def simulate_sweep(traces: Sequence[Trace], methods: Iterable[str], gammas: Iterable[int], cost: CostModel,
                   params: dict[str, Any] | None = None, max_new_tokens: int | None = None,
                   replays: SessionMemo | None = None) -> list[RunRecord]:
    """Every method × γ0 × trace, as RunRecords (kind "sim"); plus a target-only record per trace.

    With `replays` (a `replays.Replays`, which imports this module) the sessions are kept there, so that the
    shares priced later (reference.share_rows) reuse them.
    """
    params = params or {}
    out: list[RunRecord] = []
    for m in methods:
        for g in gammas:
            settings = PolicySettings.build(m, g, **params)
            for t in traces:
                out.append(replays.play(t, settings.make, settings, max_new_tokens, cost) if replays is not None
                           else play_trace(t, settings.make(), max_new_tokens, cost))
    return out


def plain_records(traces: Sequence[Trace], kind: str = "sim", cost: CostModel | None = None) -> list[RunRecord]:
    """Target-only decoding, priced by `cost_model.target_only_s`."""
    from ..results import PLAIN

    return [RunRecord(method=PLAIN, gamma0=None, prompt_id=t.prompt_id, kind=kind, tokens=len(t.tokens),
                      steps=len(t.tokens), wall_s=target_only_s(t, cost),
                      stop_reason="eos" if t.ended_eos else "max_new_tokens") for t in traces]


@dataclass
class LiveCheck:
    """A simulated session against a live one of the same policy, prompt and budget."""

    method: str
    gamma0: int
    prompt_id: str
    steps_equal: bool
    first_difference: int | None
    live_steps: int
    sim_steps: int
    live_tokens: int
    sim_tokens: int
    live_s: float
    sim_s: float
    output_equal: bool

    @property
    def ratio(self) -> float:
        """Simulated tokens/s over live tokens/s."""
        if not (self.live_s > 0 and self.sim_s > 0 and self.live_tokens):
            return math.nan
        return (self.sim_tokens / self.sim_s) / (self.live_tokens / self.live_s)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ratio"] = self.ratio
        return d


def live_steps(events: Iterable[Any]) -> tuple[list[tuple[int, int, int, int]], Any, list[int]]:
    """(γ, drafted, accepted, emitted) per StepEvent, the summary, and the emitted ids."""
    out = []
    summary = None
    ids: list[int] = []
    for ev in events:
        t = getattr(ev, "type", "")
        if t == "step":
            out.append((ev.gamma, len(ev.drafted), ev.accepted, len(ev.emitted)))
            ids.extend(e.id for e in ev.emitted)
        elif t == "summary":
            summary = ev
    return out, summary, ids


def check_against_live(trace: Trace, settings: PolicySettings, events: list[Any], cost: CostModel | None,
                       max_new_tokens: int | None = None) -> LiveCheck:
    """Compares the live run's events with the same policy played over `trace`."""
    sim_steps: list[SimStep] = []
    timings = [(ev.draft_s, ev.verify_s) for ev in events if getattr(ev, "type", "") == "step"]
    rec = play_trace(trace, settings.make(), max_new_tokens, cost, sim_steps, timings)
    live, summary, ids = live_steps(events)
    sim = [(s.gamma, s.drafted, s.accepted, s.emitted) for s in sim_steps]
    first = next((i for i, (x, y) in enumerate(zip(live, sim)) if x != y), None)
    if first is None and len(live) != len(sim):
        first = min(len(live), len(sim))
    return LiveCheck(settings.method, settings.gamma0, trace.prompt_id, first is None, first, len(live), len(sim),
                     summary.tokens if summary else sum(s[3] for s in live), rec.tokens,
                     summary.wall_s if summary else 0.0, rec.wall_s, ids == trace.tokens[:len(ids)] and len(ids) == rec.tokens)
