"""One played session's bookkeeping, shared by every player (model traces in simulate.py, lookup traces in
lookup_trace.py, a head's chains in head_trace.py; the last two through `play_windows`).

A player's own work is the window: how many tokens a policy would have
drafted and the target accepted at this position of its trace. Everything
after that is the decoder's step rule (engine/policies/step_rule.py: the
emitted run, the EOS and budget cut, the policy's costs and update), counted
as the decoder counts it and priced by the cost model. Both players hand
their windows to one `SessionPlay`, so that part is written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ...engine.policies import Policy
from ...engine.policies.policy_base import TokenStats
from ...engine.policies.step_rule import Costs, plan_window, settle_step
from .cost_model import CostModel
from ..results import RunRecord
from .sim_trace import SimTrace


@dataclass
class SimStep:
    gamma: int
    drafted: int
    accepted: int
    emitted: int
    early_stop: bool


def session_budget(trace: SimTrace, max_new_tokens: int | None) -> int:
    """The tokens a played session may emit: the trace's own budget unless asked for at most as many
    (more only when the trace ended on EOS, so that a larger budget would end there too)."""
    max_new = trace.max_new_tokens if max_new_tokens is None else max_new_tokens
    if max_new > trace.max_new_tokens and not trace.ended_eos:
        raise ValueError(f"the trace was recorded with max_new_tokens={trace.max_new_tokens}, not {max_new}")
    return max_new


def book_step(tally: RunRecord, windows: dict[int, int], steps_out: list[SimStep] | None, gamma: int,
              drafted: int, accepted: int, emitted: int, early: bool, draft_calls: int) -> None:
    """One played step counted as the decoder counts it: the tally, the windows the cost model prices, the steps."""
    tally.add_step(drafted, accepted, draft_calls, 0.0, 0.0)
    windows[drafted] = windows.get(drafted, 0) + 1
    if steps_out is not None:
        steps_out.append(SimStep(gamma, drafted, accepted, emitted, early))


def trace_left(toks: Sequence[int], n: int) -> None:
    """A session that goes on after `n` tokens needs the trace to: one recorded shorter than asked is an error,
    never a silent stop (the run a step emits ends at the trace's end at the latest)."""
    if n >= len(toks):
        raise ValueError("trace ended before the session did")


def plans_by_cost(policy: Policy) -> bool:
    """Whether the policy reads what steps cost (it overrides `observe_costs`): the others need no prices."""
    return type(policy).observe_costs is not Policy.observe_costs


def step_costs(timings: Sequence[tuple[float, float]] | None, cost: CostModel | None, step: int,
               drafted: int) -> Costs | None:
    """What a played step cost, as `observe_costs` is told it: a live run's own timings, else the model's prices."""
    if timings is not None and step < len(timings):
        return timings[step][0], drafted, timings[step][1], drafted + 1
    if cost is not None:
        return cost.draft(drafted), drafted, cost.verify(drafted + 1), drafted + 1
    return None


def price_session(tally: RunRecord, windows: dict[int, int], cost: CostModel | None, session_s: float) -> None:
    """A played session's times from the cost model: drafts, one verify per step by its window, the rest."""
    if cost is None:
        return
    tally.draft_s = tally.drafted * cost.draft_token_s + cost.draft_step_s * sum(c for d, c in windows.items() if d)
    tally.verify_s = sum(c * cost.verify(d + 1) for d, c in sorted(windows.items()))
    tally.wall_s = (session_s + cost.session_s + tally.draft_s + tally.verify_s
                    + tally.steps * cost.step_s + tally.tokens * cost.emit_token_s)


class SessionPlay:
    """A session being played over one trace: its position, tally and step log, settled step by step."""

    def __init__(self, trace: SimTrace, policy: Policy, max_new_tokens: int | None, cost: CostModel | None,
                 steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None):
        self.trace, self.policy, self.cost, self.steps_out, self.timings = trace, policy, cost, steps_out, timings
        self.max_new = session_budget(trace, max_new_tokens)
        self.toks: Sequence[int] = trace.tokens
        self.eos = set(trace.eos_ids)
        self.observes = plans_by_cost(policy)
        self.n = 0  # tokens emitted so far
        self.tally = RunRecord(method=policy.name, gamma0=policy.gamma0, prompt_id=trace.prompt_id, kind="sim")
        self.windows: dict[int, int] = {}  # drafted d → steps (each verified d + 1 tokens), for the cost model
        self.stop_reason: str | None = None

    def settle(self, gamma: int, window: int, drafted: int, accepted: int, stats: Sequence[TokenStats],
               early: bool, draft_calls: int) -> bool:
        """The step after its window was drafted, as the decoder settles it; True when the session ends here.

        The accepted drafts are the trace's own tokens, and the target's token follows them.
        """
        n = self.n
        settled = settle_step(self.policy, window=window, drafted=drafted, accepted=accepted, stats=stats,
                              run=self.toks[n:n + accepted + 1], eos=self.eos, generated=n, max_new=self.max_new,
                              costs=step_costs(self.timings, self.cost, self.tally.steps, drafted)
                              if self.observes else None)
        self.n = n + len(settled.emitted)
        book_step(self.tally, self.windows, self.steps_out, gamma, drafted, accepted, len(settled.emitted), early,
                  draft_calls=draft_calls)
        if not settled.stop:
            trace_left(self.toks, self.n)   # raises where the trace ends before the session does
        self.stop_reason = settled.stop
        return bool(self.stop_reason)

    def record(self) -> RunRecord:
        """The finished session, priced."""
        self.tally.tokens, self.tally.stop_reason = self.n, self.stop_reason or ""
        price_session(self.tally, self.windows, self.cost, self.trace.session_s)
        return self.tally


Outcome = Callable[[int, int, Policy], tuple[int, int, bool, list[TokenStats]]]


def play_windows(trace: SimTrace, policy: Policy, outcome: Outcome, max_new_tokens: int | None, cost: CostModel | None,
                 steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None,
                 counts_calls: bool) -> RunRecord:
    """One session of `policy` over a trace whose source proposes a whole window from each position (prompt
    lookup, a head's chain): `outcome(n, window, policy)` is (drafted, accepted, early stop, statistics) of the
    step from position n. As the decoder (engine/policies/step_rule.py): window = min(γ, remaining − 1); a step
    whose source proposed nothing is a plain target step. `counts_calls`: each drafted token is one call of the
    source (a head's forward), else none (a lookup)."""
    play = SessionPlay(trace, policy, max_new_tokens, cost, steps_out, timings)
    while True:
        n = play.n
        gamma = policy.gamma
        window = plan_window(gamma, play.max_new - n)
        d, a, early, stats = outcome(n, window, policy) if window > 0 else (0, 0, False, [])
        if play.settle(gamma, window, d, a, stats, early, draft_calls=d if counts_calls else 0):
            return play.record()


__all__ = ["SessionPlay", "SimStep", "play_windows", "book_step", "plans_by_cost", "price_session", "session_budget", "step_costs",
           "trace_left"]
