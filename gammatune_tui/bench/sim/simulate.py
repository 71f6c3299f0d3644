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
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from ...engine.policies import Policy, PolicySettings
from ...engine.policies.policy_base import TokenStats
from ...engine.policies.step_rule import plan_window, window_end, window_ends
from .trace_stats import TraceWindow, Unknown, UnknownRows
from .trace_kinds import kind_of
from ...engine.common.names import MODEL
from .cost_model import CostModel, target_only_s
from ..results import RunRecord
from .session_play import SessionPlay, SimStep

@dataclass
class Trace:
    """What one prompt looks like to every greedy policy (drafted by a draft model: model_kind.py)."""

    kind = MODEL   # its trace kind (trace_kinds.py); a class attribute, so the saved form has no such field

    prompt_id: str
    prompt_ids: list[int]
    tokens: list[int]  # the target's greedy continuation (ends with EOS when it stopped there)
    draft_ids: list[int]  # draft argmax at each continuation position (teacher forced)
    draft_prob: list[float]  # its top-1 probability (= chosen probability under greedy)
    off_ids: dict[int, list[int]]  # position j of a disagreement → the draft's next proposals after its own token
    off_prob: dict[int, list[float]]
    off_depth: int  # how many proposals after a disagreement were recorded (unless EOS came first)
    eos_ids: list[int]
    max_new_tokens: int
    session_s: float = 0.0  # per-session cost outside the steps (header, both prefills)
    plain_s: float = 0.0  # target-only decoding of the continuation, prefill included
    target_flips: list[int] = field(default_factory=list)  # positions where teacher forcing disagrees with the cached path
    fragile: int = 0  # positions whose target or draft top-2 gap < trace_record.FRAGILE_GAP
    # sampled traces (trace_sampled.py): the draft's top-1 probability where it differs from the chosen one,
    # and the sampling settings the trace was drawn with; None for greedy traces (top-1 = chosen)
    draft_top: list[float] | None = None
    off_top: dict[int, list[float]] | None = None
    sampling: dict[str, Any] | None = None
    # the entropy of the draft's law at each position and off-path proposal (nats; the served law when sampled);
    # None in a trace that did not record it: it plays with NaN (unknown)
    draft_entropy: list[float] | None = None
    off_entropy: dict[int, list[float]] | None = None

    @property
    def ended_eos(self) -> bool:
        return bool(self.tokens) and self.tokens[-1] in self.eos_ids

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["off_ids"] = {str(k): v for k, v in self.off_ids.items()}
        d["off_prob"] = {str(k): v for k, v in self.off_prob.items()}
        for name in ("off_top", "off_entropy"):
            if getattr(self, name) is not None:
                d[name] = {str(k): v for k, v in getattr(self, name).items()}
        for k in ("draft_top", "off_top", "sampling", "draft_entropy", "off_entropy"):  # greedy traces keep their old form
            if d[k] is None:
                del d[k]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Trace":
        d = dict(d)
        d["off_ids"] = {int(k): v for k, v in d["off_ids"].items()}
        d["off_prob"] = {int(k): v for k, v in d["off_prob"].items()}
        for name in ("off_top", "off_entropy"):
            if d.get(name) is not None:
                d[name] = {int(k): v for k, v in d[name].items()}
        return cls(**d)

    @property
    def sampled(self) -> bool:
        return self.sampling is not None


class TraceTooShallow(ValueError):
    """A window longer than the off-path depth recorded in the trace."""


def _aux(trace: Trace) -> tuple[list[int], dict[int, int | None]]:
    """Per-trace lookups, computed once: match-run lengths and where each off-path hits EOS."""
    cached = trace.__dict__.get("_aux")
    if cached is not None:
        return cached
    toks, dids = trace.tokens, trace.draft_ids
    L = len(toks)
    run = [0] * (L + 1)
    for i in range(L - 1, -1, -1):
        run[i] = run[i + 1] + 1 if dids[i] == toks[i] else 0
    eos = set(trace.eos_ids)
    off_eos = {j: next((k for k, x in enumerate(xs) if x in eos), None) for j, xs in trace.off_ids.items()}
    trace.__dict__["_aux"] = (run, off_eos)
    return run, off_eos


def play_trace(trace: Any, policy: Policy, max_new_tokens: int | None = None,
               cost: CostModel | None = None, steps_out: list[SimStep] | None = None,
               timings: Sequence[tuple[float, float]] | None = None) -> RunRecord:
    """One session of `policy` over a trace of any kind, played by its kind (trace_kinds.py)."""
    return kind_of(trace).play(trace, policy, max_new_tokens, cost, steps_out, timings)


def play_model_trace(trace: Trace, policy: Policy, max_new_tokens: int | None = None,
                     cost: CostModel | None = None, steps_out: list[SimStep] | None = None,
                     timings: Sequence[tuple[float, float]] | None = None) -> RunRecord:
    """One session of `policy` over a draft model's `trace`, with the decoder's exact rules; timed by `cost`.

    Policies that never stop early (`may_stop_early` False) take a shortcut
    that needs no per-token Python: the window is cut only by the end of the
    match run, a drafted EOS and the budget (the window's statistics are read
    from the trace only if the policy's update reads them). The others are
    asked about every drafted token, as the decoder asks them.

    A policy that plans by cost (one that overrides `observe_costs`) is told
    each step's cost before its update, as the decoder tells it: the
    (draft_s, verify_s) of `timings[i]` for step i when given (a live run's
    own timings, so that its replay is exact), else the cost model's prices.
    """
    play = SessionPlay(trace, policy, max_new_tokens, cost, steps_out, timings)
    max_new, eos = play.max_new, play.eos
    toks, dids, dprob = trace.tokens, trace.draft_ids, trace.draft_prob
    off_ids, off_prob = trace.off_ids, trace.off_prob
    dtop = trace.draft_top if trace.draft_top is not None else dprob
    off_top = trace.off_top if trace.off_top is not None else off_prob
    dent = trace.draft_entropy if trace.draft_entropy is not None else Unknown()
    off_ent = trace.off_entropy if trace.off_entropy is not None else UnknownRows()
    L = len(toks)
    run, off_eos = _aux(trace)
    fast = not policy.may_stop_early
    while True:
        n = play.n
        gamma = policy.gamma
        window = plan_window(gamma, max_new - n)
        early = False
        stats: Sequence[TokenStats] = ()
        if window <= 0:
            d = a = 0
        elif fast:
            r = run[n]
            if window <= r:
                d = a = window
            elif n + r >= L:  # matched through the final EOS: drafting stopped on it
                d = a = window_end(window, r - 1)
            else:
                m = n + r
                a = r
                if dids[m] in eos:   # the proposal: r matches, the draft's own token at m, then its off-path
                    d = window_end(window, r)
                else:
                    e = off_eos[m]
                    d = window_end(window, None if e is None else r + 1 + e)
                    if d == window and window - r - 1 > len(off_ids[m]):
                        raise TraceTooShallow(f"window {window} needs {window - r - 1} draft proposals after a "
                                              f"disagreement; the trace holds {trace.off_depth}")
            stats = TraceWindow(trace, dent, off_ent, n, a, d)
        else:
            d = a = 0
            miss = -1
            off: list[int] = []
            offp: list[float] = []
            offt: list[float] = []
            offe: Sequence[float] = ()
            stats = []
            while True:
                pos = n + d
                if miss < 0:
                    x, p, top, ent = dids[pos], dprob[pos], dtop[pos], dent[pos]
                    if x == toks[pos]:
                        a += 1
                    else:
                        miss = pos
                        off, offp, offt, offe = off_ids[miss], off_prob[miss], off_top[miss], off_ent[miss]
                else:
                    k = pos - miss - 1
                    if k >= len(off):
                        raise TraceTooShallow(
                            f"window {window} needs {k + 1} draft proposals after a disagreement; "
                            f"the trace holds {trace.off_depth}")
                    x, p, top, ent = off[k], offp[k], offt[k], offe[k]
                d += 1
                st = TokenStats(top, p, ent)
                done, early = window_ends(d, window, x, st, stats, policy, eos)
                stats.append(st)
                if done:
                    break
        if play.settle(gamma, window, d, a, stats, early, draft_calls=d):
            return play.record()


def simulate_sweep(traces: Sequence[Trace], methods: Iterable[str], gammas: Iterable[int], cost: CostModel,
                   params: dict[str, Any] | None = None, max_new_tokens: int | None = None,
                   replays: Any = None) -> list[RunRecord]:
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
