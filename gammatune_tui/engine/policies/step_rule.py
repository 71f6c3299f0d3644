"""What happens after drafting, written once: the window, where it ends, what is emitted, when the policy learns.

Four places play speculative steps: the live decoder (decoder.py), the trace
simulator for a draft model (bench/sim/simulate.py), the one for prompt
lookup (bench/sim/lookup_trace.py) and the model-free synthetic source
(session/synthetic.py). They differ in where tokens and verdicts come from;
the rules below are the same for all of them, so a policy sees the same
steps and learns the same things wherever it runs (docs/spec.md §1; the test that
drives all four with one script is tests/engine/test_step_rule.py):

* the window drafted is min(γ, remaining − 1): the target always adds one
  token, and nothing is drafted past the budget (`plan_window`);
* a window ends at its size, after a drafted EOS (which stays), or after a
  token on which a policy that may stop early says no (which stays too:
  the HF convention) — `window_ends`, asked token by token, `cut_window`
  for a proposal known at once, and `window_end` where no policy may stop
  it early and the first EOS is known;
* a step emits the accepted drafts and the target's token, cut after the
  first EOS and at the budget (`emitted_run`); the session then stops on
  that EOS or on the budget (`stop_reason`);
* the policy observes the step's costs and then updates, with every kept
  token's statistics — except after a step whose source had nothing to
  propose for a window it wanted (prompt lookup finding no match): that
  step tells it nothing (`learn`). A γ = 0 step is a step like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from .policy_base import Policy, TokenStats

Costs = tuple[float, int, float, int]
"""(draft seconds, drafted, verify seconds, verified tokens): what `Policy.observe_costs` is told."""


def plan_window(gamma: int, remaining: int | None) -> int:
    """The window a step drafts: the policy's γ, and never past the budget (`remaining` None: no budget)."""
    return gamma if remaining is None else min(gamma, remaining - 1)


def window_ends(drafted: int, window: int, token: int, stats: TokenStats, earlier: Sequence[TokenStats],
                policy: Policy, eos: frozenset[int] | set[int]) -> tuple[bool, bool]:
    """After the window's `drafted`-th token (`token`, with `stats`): (does the window end here, did the policy end it).

    The policy is asked only when it may stop early and the window would
    otherwise go on; `earlier` is the window before this token.
    """
    if drafted >= window or token in eos:
        return True, False
    if policy.may_stop_early and not policy.keep_drafting(*stats, earlier):
        return True, True
    return False, False


def window_end(window: int, eos_at: int | None) -> int:
    """How many tokens a window drafts when no policy ends it early: all `window` of them, or up to and with the
    proposal's first EOS (at index `eos_at`; None: it has none) — `window_ends`' rule for a proposal whose EOS
    is known at once (the simulator's fast paths, the oracle's options)."""
    return window if eos_at is None or eos_at >= window else eos_at + 1


def cut_window(ids: Sequence[int], stats: Sequence[TokenStats], window: int, policy: Policy,
               eos: frozenset[int] | set[int]) -> tuple[int, bool]:
    """How many of a proposal known at once (prompt lookup's, a synthetic one) a window keeps, and whether the
    policy stopped it early: `window_ends` asked token by token."""
    n = min(window, len(ids))
    if not policy.may_stop_early:
        return window_end(n, next((i for i in range(n) if ids[i] in eos), None)), False
    for i in range(n):
        earlier = stats[:i] if policy.may_stop_early else ()   # read only by a policy that may stop early
        done, early = window_ends(i + 1, window, ids[i], stats[i], earlier, policy, eos)
        if done:
            return i + 1, early
    return n, False


def emitted_run(run: Sequence[int], eos: frozenset[int] | set[int], remaining: int | None) -> list[int]:
    """What a step emits of `run` (the accepted drafts, then the target's token): cut after the first EOS and
    at the budget (`remaining` None: no budget)."""
    cut = next((i + 1 for i, t in enumerate(run) if t in eos), len(run))
    return list(run[:cut if remaining is None else min(cut, remaining)])


def stop_reason(emitted: Sequence[int], generated: int, max_new: int | None,
                eos: frozenset[int] | set[int]) -> Literal["eos", "max_new_tokens"] | None:
    """Why the session ends after a step that emitted `emitted` (`generated` tokens in all): "eos",
    "max_new_tokens", or None when it goes on."""
    if emitted and emitted[-1] in eos:
        return "eos"
    if max_new is not None and generated >= max_new:
        return "max_new_tokens"
    return None


def learn(policy: Policy, window: int, drafted: int, accepted: int, stats: Sequence[TokenStats],
          costs: Costs | None) -> bool:
    """The policy observes the step's costs (None: nothing to tell it), then updates; returns whether it learned.

    A step that wanted a window and drafted nothing (the source had no
    proposal) is a plain target step the policy did not choose: it learns
    nothing from it. A step that planned no window (γ = 0, or the budget's
    last token) is one it chose, and it learns from it.
    """
    if not (drafted or window <= 0):
        return False
    if costs is not None:
        policy.observe_costs(*costs)
    policy.update(accepted=accepted, drafted=drafted, window=stats)
    return True


@dataclass(frozen=True)
class Settled:
    """A step once verified: what it emits and whether the session stops after it."""

    emitted: list[int]
    stop: Literal["eos", "max_new_tokens"] | None


def settle_step(policy: Policy, *, window: int, drafted: int, accepted: int, stats: Sequence[TokenStats],
                run: Sequence[int], eos: frozenset[int] | set[int], generated: int, max_new: int | None,
                costs: Costs | None) -> Settled:
    """Everything after the verdict, in the order every caller needs it: the emitted run, the policy's learning,
    and the stop. `generated`: the tokens emitted before this step."""
    emitted = emitted_run(run, eos, None if max_new is None else max_new - generated)
    learn(policy, window, drafted, accepted, stats, costs)
    return Settled(emitted, stop_reason(emitted, generated + len(emitted), max_new, eos))


__all__ = ["Costs", "Settled", "cut_window", "emitted_run", "learn", "plan_window", "settle_step", "stop_reason",
           "window_end", "window_ends"]
