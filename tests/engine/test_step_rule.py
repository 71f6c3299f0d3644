"""One step rule (engine/policies/step_rule.py): the decoder, both simulators and the synthetic source play a script alike.

A scripted policy plans a fixed list of windows (a γ = 0 plan among them)
and stops a window early at scripted steps; it logs what it is told
(costs) and what it learns (each update's counts and window statistics).
Each caller plays it in a world it shares with another: the live decoder
against the trace of the same pair (a drafted EOS inside a window, and the
budget's last token), the live decoder drafting by prompt lookup against
prompt lookup's trace (steps with nothing to propose), and the synthetic
source against a trace made of its own draft pattern. Each pair must give
the same steps and leave the policy in the same state.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from tiny_models import target_only_pair
from gammatune_tui.bench.sim.lookup_trace import record_lookup_trace
from gammatune_tui.bench.sim.simulate import SimStep, Trace, live_steps, play_trace
from gammatune_tui.bench.sim.trace_record import record_trace
from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.policies.policy_base import Policy
from gammatune_tui.engine.policies.policy_params import PolicyParams
from gammatune_tui.session import synthetic
from gammatune_tui.session.synthetic import SyntheticSource

PLANS = [4, 0, 3, 6, 2, 5, 1, 4, 6]
STOPS = {2: 1, 3: 2, 7: 3}   # step → stop after its k-th token (when the window gets that far)


class Script(Policy):
    name = "script"
    may_stop_early = True

    def __init__(self) -> None:
        super().__init__(PLANS[0], PolicyParams.build(gamma_min=1, gamma_max=8))
        self.step, self.log = 0, []

    def keep_drafting(self, top_prob, chosen_prob, entropy, earlier=()):
        return len(earlier) + 1 != STOPS.get(self.step)

    def observe_costs(self, draft_s, drafted, verify_s, verified):
        self.log.append(("costs", drafted, verified, round(draft_s, 9), round(verify_s, 9)))

    def update(self, accepted, drafted, window=()):
        self.log.append(("update", accepted, drafted, [tuple(w) for w in window]))
        self.step += 1
        self.gamma = PLANS[self.step % len(PLANS)]


def _same_state(a: Script, b: Script) -> None:
    assert (a.step, a.gamma) == (b.step, b.gamma)
    assert len(a.log) == len(b.log)
    for x, y in zip(a.log, b.log):
        assert x[:3] == y[:3]
        if x[0] == "update":   # live and teacher-forced probabilities agree to float precision
            assert len(x[3]) == len(y[3])
            for s, t in zip(x[3], y[3]):
                assert s == pytest.approx(t, abs=1e-4)
        else:
            assert x[3:] == y[3:]


def _live(pair, prompt_ids, max_new, drafter=None):
    policy = Script()
    events = list(SpeculativeDecoder(pair, policy, SamplingConfig(), drafter=drafter).generate(
        list(prompt_ids), max_new_tokens=max_new))
    return policy, events


def _replay(trace, events, max_new):
    policy, steps = Script(), []
    timings = [(e.draft_s, e.verify_s) for e in events if isinstance(e, StepEvent)]
    play_trace(trace, policy, max_new, None, steps, timings)
    return policy, steps


def _check(live_policy, events, sim_policy, sim_steps: list[SimStep]) -> list[StepEvent]:
    live, summary, _ = live_steps(events)
    assert live == [(s.gamma, s.drafted, s.accepted, s.emitted) for s in sim_steps]
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert [e.early_stop for e in steps] == [s.early_stop for s in sim_steps]
    _same_state(live_policy, sim_policy)
    return steps


def test_the_decoder_and_the_trace_simulator_play_one_rule(tiny_pair):
    ids = tiny_pair.encode_prompt("def fib(n):\n    return", raw=True)
    _, first = _live(dataclasses.replace(tiny_pair, eos_ids=frozenset()), ids, 40)
    steps = [e for e in first if isinstance(e, StepEvent)]
    emitted = {t.id for e in steps for t in e.emitted}
    # an EOS the draft proposes inside a later window and the target never emits: it cuts that window
    mid = next(t.id for e in steps[3:] for t in e.drafted[1:-1] if t.id not in emitted)
    for eos in (frozenset({mid}), frozenset()):
        pair = dataclasses.replace(tiny_pair, eos_ids=eos)
        live_policy, events = _live(pair, ids, 40)
        trace = record_trace(pair, "p", ids, 40, 8, eos)
        sim_policy, sim_steps = _replay(trace, events, 40)
        steps = _check(live_policy, events, sim_policy, sim_steps)
        assert events[-1].stop_reason == "max_new_tokens" and events[-1].tokens == 40
        assert any(e.gamma == 0 and not e.drafted for e in steps)   # a γ = 0 plan …
        assert sum(1 for x in live_policy.log if x[0] == "update") == len(steps)   # … learned from like any step
        assert any(e.early_stop for e in steps)                     # an early stop
        cut = [e for e in steps if e.drafted and len(e.drafted) < e.gamma and not e.early_stop]
        if eos:   # the drafted EOS ended its window (and stays in it)
            assert any(e.drafted[-1].id == mid for e in cut)
        else:     # the budget's last tokens cut the window the policy planned
            assert cut


def test_prompt_lookup_live_and_its_trace_play_one_rule():
    pair = target_only_pair("prompt-lookup")
    ids = pair.encode_prompt("def fib(n):\n    return", raw=True)
    live_policy, events = _live(pair, ids, 48, drafter="prompt-lookup")
    trace = record_lookup_trace(pair, "p", ids, 48, 16, pair.eos_ids, 1, 3)
    sim_policy, sim_steps = _replay(trace, events, 48)
    steps = _check(live_policy, events, sim_policy, sim_steps)
    before = [sum(len(x.emitted) for x in steps[:i]) for i in range(len(steps))]
    nothing = [e for e, n in zip(steps, before) if min(e.gamma, 48 - n - 1) > 0 and not e.drafted]
    assert nothing   # the source found no match for a window it wanted: a plain step the policy is not told about
    assert sum(1 for x in live_policy.log if x[0] == "update") == len(steps) - len(nothing)


def _synthetic_trace(src: SyntheticSource, max_new: int, depth: int = 8) -> Trace:
    """The synthetic source's own world as a greedy trace: its text, and its draft's agreement and confidence."""
    pieces = synthetic._pieces(src.text)
    ids = {p: 10 + i for i, p in enumerate(dict.fromkeys(pieces))}
    draft = synthetic._Draft(random.Random(src.seed), src.agreement, len(pieces) + 64)
    n = max_new + depth + 1
    tokens = [ids[pieces[k % len(pieces)]] for k in range(n)]
    d_ids = [tokens[k] if draft.at(k)[0] else ids.get("~", 5) for k in range(n)]
    d_prob = [draft.at(k)[1] for k in range(n)]
    miss = [j for j in range(max_new) if d_ids[j] != tokens[j]]
    return Trace(prompt_id="synthetic", prompt_ids=[1], tokens=tokens[:max_new], draft_ids=d_ids, draft_prob=d_prob,
                 off_ids={j: d_ids[j + 1:j + 1 + depth] for j in miss},
                 off_prob={j: d_prob[j + 1:j + 1 + depth] for j in miss}, off_depth=depth, eos_ids=[],
                 max_new_tokens=max_new, draft_entropy=[synthetic._two_way_entropy(p) for p in d_prob],
                 off_entropy={j: [synthetic._two_way_entropy(p) for p in d_prob[j + 1:j + 1 + depth]] for j in miss})


def test_the_synthetic_source_plays_the_same_rule(monkeypatch):
    src = SyntheticSource("specdecode", max_new_tokens=30, agreement=0.7, seed=4)
    policy = Script()
    monkeypatch.setattr(type(src.settings), "make", lambda self: policy)
    events = list(src.generate(src.prompt))
    sim_policy, sim_steps = _replay(_synthetic_trace(src, 30), events, 30)
    steps = _check(policy, events, sim_policy, sim_steps)
    assert any(e.gamma == 0 for e in steps) and any(e.early_stop for e in steps)
    # a γ = 0 plan is learned from here too (it was not: such a step never updated the policy again)
    assert sum(1 for x in policy.log if x[0] == "update") == len(steps)
    assert len(steps[-1].drafted) < steps[-1].gamma and events[-1].tokens == 30
