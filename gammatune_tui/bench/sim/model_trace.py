"""A draft model's greedy trace and how one session plays over it (the first trace kind, model_kind.py).

Split from simulate.py so that the kinds (model_kind.py, lookup_trace.py) stand below the modules that
dispatch over them: simulate.py's `play_trace`, the oracle's `step_options` and hindsight reach a kind
through trace_kinds.py, which imports every kind, and no kind imports them back (tests/test_architecture.py
checks there is no circle). simulate.py's docstring says what a trace holds and why replaying it is exact.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Sequence

from ...engine.common.names import MODEL
from ...engine.policies import Policy
from ...engine.policies.policy_base import TokenStats
from ...engine.policies.step_rule import plan_window, window_end, window_ends
from ..results import RunRecord
from .cost_model import CostModel
from .session_play import SessionPlay, SimStep
from .trace_stats import TraceWindow, Unknown, UnknownRows


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


class ProposalTrace:
    """What a trace that keeps each position's proposals (prompt lookup's, a head's chain) answers as `Trace` does;
    its own dataclass holds the fields named here."""

    __dataclass_fields__: ClassVar[dict[str, Any]]
    tokens: list[int]
    proposals: list[list[int]]
    depth: int
    eos_ids: list[int]

    @property
    def ended_eos(self) -> bool:
        return bool(self.tokens) and self.tokens[-1] in self.eos_ids

    @property
    def off_depth(self) -> int:
        """As `Trace.off_depth`: the longest window every policy can replay here, minus one (the tuner reads it)."""
        return self.depth - 1

    @property
    def draft_ids(self) -> list[int]:
        """The first proposed token at each position (-1 where there was none), as `Trace.draft_ids`."""
        return [p[0] if p else -1 for p in self.proposals]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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
            offe: Sequence[float] | Unknown = ()
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


def model_step_options(trace: Trace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
    """`step_options` of a draft model's trace.

    The same rules as the simulator's replay: a window within the match run
    drafts and accepts it all; beyond it, drafting goes on past the miss
    (through the draft's recorded proposals) until the window, a drafted EOS or
    the end of the trace. Windows that would need more proposals than the
    trace holds are left out (no policy can replay them either).
    """
    toks, dids = trace.tokens, trace.draft_ids
    L = len(toks)
    run, off_eos = _aux(trace)
    eos = set(trace.eos_ids)
    r = run[n]
    out = [(w, w, w, min(w + 1, L - n)) for w in range(min(r, wmax) + 1)]
    if wmax <= r or n + r >= L:  # longer windows stop where the run does (matched through the final EOS)
        return out
    m = n + r
    new = r + 1
    eos_at: int | None
    if dids[m] in eos:  # the mismatching draft token is EOS: drafting stops on it
        off, eos_at = [], r
    else:
        off, e = trace.off_ids[m], off_eos[m]
        eos_at = None if e is None else r + 1 + e
    for w in range(r + 1, wmax + 1):
        d = window_end(w, eos_at)
        if d == w and w - r - 1 > len(off):
            break
        out.append((w, d, r, new))
        if eos_at is not None and w > eos_at:  # through the EOS: every longer window drafts the same
            break
    return out
