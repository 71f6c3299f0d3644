"""The trace simulator plays a live greedy session exactly: same steps, same accepted counts."""

from __future__ import annotations

import dataclasses

import pytest

from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.simulate import (
    Trace, TraceTooShallow, check_against_live, live_steps, play_trace,
)
from gammatune_tui.bench.sim.trace_record import record_trace
from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.errors import TraceWithoutEntropy

PROMPTS = {"p0": [5, 9, 13, 22, 7], "p1": [3, 4, 5, 6, 7, 8, 30, 31], "p2": [40]}
MAX_NEW = 40
DEPTH = 11  # windows up to 12


@pytest.fixture(scope="module")
def traces(bench_pair):
    out = [record_trace(bench_pair, k, v, MAX_NEW, DEPTH, bench_pair.eos_ids) for k, v in PROMPTS.items()]
    for t in out:
        # preconditions that make the comparison meaningful: no float near-ties, mixed acceptance
        assert t.fragile == 0 and t.target_flips == []
        agree = sum(a == b for a, b in zip(t.draft_ids, t.tokens)) / len(t.tokens)
        assert 0.2 < agree < 0.98
    return out


def _live(pair, settings, prompt, max_new=MAX_NEW):
    return list(SpeculativeDecoder(pair, settings, SamplingConfig()).generate(prompt, max_new_tokens=max_new))


CASES = [(m, g, {}) for m in METHODS for g in (1, 2, 5, 12)] + [
    ("gammatune+", 4, {"tau": 0.6, "eta": 0.3, "delta": 2}),
    ("gammatune", 3, {"eta": 0.7, "gamma_min": 2, "gamma_max": 6}),
    ("assistant-threshold", 6, {"tau": 0.5, "dynamic_tau": True}),
]


@pytest.mark.parametrize("method,gamma0,params", CASES)
def test_played_trace_equals_live(bench_pair, traces, method, gamma0, params):
    s = PolicySettings.build(method, gamma0, **params)
    for t in traces:
        events = _live(bench_pair, s, t.prompt_ids)
        check = check_against_live(t, s, events, None)
        assert check.steps_equal, (t.prompt_id, check)
        assert check.output_equal


def test_early_stops_happen(bench_pair, traces):
    """The fixture exercises the off-path: early stops after a disagreement, at both policies."""
    for m in ("assistant-threshold", "gammatune+"):
        # a floor of 4 keeps GammaTune+'s windows long enough to draft past a disagreement (its default floor,
        # 1, shrinks them to a token or two after the first rejection, and this test is about the traces)
        s = PolicySettings.build(m, 8, tau=0.5, gamma_min=4)
        sim_steps = []
        for t in traces:
            play_trace(t, s.make(), steps_out=sim_steps)
        early = [x for x in sim_steps if x.early_stop]
        assert early and any(x.drafted > x.accepted + 1 for x in early)


def test_shorter_budget_and_eos(bench_pair, traces):
    """A smaller max_new_tokens, and an EOS inside the continuation, end both runs the same way."""
    t = traces[0]
    s = PolicySettings.build("gammatune", 4)
    events = _live(bench_pair, s, t.prompt_ids, max_new=17)
    assert check_against_live(t, s, events, None, max_new_tokens=17).steps_equal

    eos_tok = t.tokens[12]
    pair2 = dataclasses.replace(bench_pair, eos_ids=frozenset({eos_tok}))
    t2 = record_trace(pair2, "eos", t.prompt_ids, MAX_NEW, DEPTH, pair2.eos_ids)
    assert t2.ended_eos and len(t2.tokens) == t.tokens.index(eos_tok) + 1
    for m in METHODS:
        s = PolicySettings.build(m, 5)
        events = _live(pair2, s, t.prompt_ids)
        steps, summary, ids = live_steps(events)
        assert summary.stop_reason == "eos"
        check = check_against_live(t2, s, events, None)
        assert check.steps_equal and check.output_equal


def test_cost_model_charges_each_step(traces):
    cost = CostModel(draft_token_s=0.001, verify_s={1: 0.01, 2: 0.012, 4: 0.02}, step_s=0.0005, emit_token_s=0.0001)
    assert cost.verify(3) == pytest.approx(0.016)
    assert cost.verify(6) == pytest.approx(0.028)  # linear beyond the last point
    t = traces[0]
    steps = []
    rec = play_trace(t, PolicySettings.build("specdecode", 2).make(), cost=cost, steps_out=steps)
    want = t.session_s + sum(s.drafted * 0.001 + cost.verify(s.drafted + 1) + 0.0005 + s.emitted * 0.0001 for s in steps)
    assert rec.wall_s == pytest.approx(want)
    assert rec.tokens == MAX_NEW == sum(s.emitted for s in steps)


def test_trace_round_trips_and_depth_is_enforced(traces):
    t = traces[1]
    back = Trace.from_json(t.to_json())
    assert back == t
    shallow = dataclasses.replace(t, off_ids={k: v[:1] for k, v in t.off_ids.items()},
                                  off_prob={k: v[:1] for k, v in t.off_prob.items()}, off_depth=1)
    with pytest.raises(TraceTooShallow):
        play_trace(shallow, PolicySettings.build("specdecode", 8).make())


def test_fast_path_equals_token_by_token(bench_pair, traces):
    """Policies that never stop early skip the per-token loop; forcing the loop gives the same run."""
    from gammatune_tui.engine.policies import GammaTune, HFHeuristic, SpecDecode

    t = traces[0]
    eos_pair = dataclasses.replace(bench_pair, eos_ids=frozenset({t.tokens[20], t.draft_ids[7]}))
    t_eos = record_trace(eos_pair, "eos", t.prompt_ids, MAX_NEW, DEPTH, eos_pair.eos_ids)
    for cls in (SpecDecode, HFHeuristic, GammaTune):
        def learning(c, **kw):   # records the window statistics each update is given
            def update(self, accepted, drafted, window=()):
                self.windows.append(list(window))
                c.update(self, accepted, drafted, window)
            return type("Rec" + c.__name__, (c,), {"update": update, "windows": None, **kw})
        fast_cls, slow_cls = learning(cls), learning(cls, may_stop_early=True)   # slow: asked about every token
        for tr in traces + [t_eos]:
            for g in (1, 3, 7, 12):
                fast_steps, slow_steps = [], []
                p = PolicySettings.build(cls.name, g)
                fast, slow = fast_cls(g, p.params), slow_cls(g, p.params)
                fast.windows, slow.windows = [], []
                a = play_trace(tr, fast, steps_out=fast_steps)
                b = play_trace(tr, slow, steps_out=slow_steps)
                assert fast_steps == slow_steps and a.pos_drafted == b.pos_drafted and a.tokens == b.tokens
                assert fast.windows == slow.windows   # the same statistics, read from the trace only when asked


def test_a_policy_reading_entropy_plays_a_trace_as_it_runs_live(bench_pair, traces):
    """Entropy reaches the simulator as it reaches the live decoder: a policy that stops on it stops alike."""
    from gammatune_tui.engine.policies import GammaTune

    ents = sorted(h for t in traces for h in t.draft_entropy)
    gap, cut = max((b - a, (a + b) / 2) for a, b in zip(ents[len(ents) // 4:], ents[len(ents) // 4 + 1:3 * len(ents) // 4]))
    assert gap > 1e-3   # no recorded entropy sits near the threshold: float paths cannot flip a decision

    class EntropyStop(GammaTune):
        name = "gammatune"
        may_stop_early = True

        def keep_drafting(self, top_prob, chosen_prob, entropy, earlier=()):
            return entropy <= cut

    params = PolicySettings.build("gammatune", 6, gamma_min=3).params
    early = 0
    for t in traces:
        events = _live(bench_pair, EntropyStop(6, params), t.prompt_ids)
        sim_steps = []
        play_trace(t, EntropyStop(6, params), steps_out=sim_steps)
        live, _, _ = live_steps(events)
        assert live == [(s.gamma, s.drafted, s.accepted, s.emitted) for s in sim_steps]
        early += sum(s.early_stop for s in sim_steps)
        steps = [e for e in events if getattr(e, "type", "") == "step"]
        pos = 0
        for e in steps:   # the live window's on-path entropies are the trace's, up to float paths
            for i, tok in enumerate(e.drafted[:e.accepted + 1]):
                assert tok.entropy == pytest.approx(t.draft_entropy[pos + i], abs=1e-3)
            pos += len(e.emitted)
    assert early   # the threshold did stop windows


def _between_median_values(values):
    """A threshold halfway between the two middle values: about half the tokens on each side, none on it."""
    v = sorted(values)
    return (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


@pytest.mark.parametrize("method,param", [("p-min", "p_min"), ("adaedl", "edl_lambda"), ("svip", "svip_h")])
def test_the_peers_stop_rules_replay_live_step_for_step(bench_pair, traces, method, param):
    """Each peer's stop rule at a threshold inside the traces' own range, so windows do end early: live = played."""
    from gammatune_tui.engine.policies.peer_policies import edl_bound, svip_score

    stat = {"p_min": lambda t: t.draft_prob, "edl_lambda": lambda t: [edl_bound(h) for h in t.draft_entropy],
            "svip_h": lambda t: [svip_score(h) for h in t.draft_entropy]}[param]
    s = PolicySettings.build(method, 6, **{param: _between_median_values([x for t in traces for x in stat(t)])})
    early = 0
    for t in traces:
        check = check_against_live(t, s, _live(bench_pair, s, t.prompt_ids), None)
        assert check.steps_equal and check.output_equal, (t.prompt_id, check)
        sim_steps = []
        play_trace(t, s.make(), steps_out=sim_steps)
        early += sum(x.early_stop for x in sim_steps)
    assert early   # the rule did end windows early


def test_a_trace_kept_before_entropy_still_plays(traces):
    d = traces[0].to_json()
    del d["draft_entropy"], d["off_entropy"]
    old = Trace.from_json(d)
    assert old.draft_entropy is None
    for m in METHODS:
        if m in ("adaedl", "svip"):  # they read the entropy the trace lacks: one clear error, not a made-up run
            with pytest.raises(TraceWithoutEntropy, match="recorded without"):
                play_trace(old, PolicySettings.build(m, 4).make())
            continue
        assert play_trace(old, PolicySettings.build(m, 4).make()).tokens == MAX_NEW


def test_calibrate_recovers_known_costs():
    """The timing pass reads the decoder's own step timings; known costs come back out."""
    from types import SimpleNamespace as NS

    from gammatune_tui.bench.sim.cost_model import calibrate

    events, t = [], 0.0
    pre = 0.003
    for d, e in [(1, 2), (3, 1), (3, 4), (1, 1), (5, 6), (5, 2), (3, 3)] * 5 + [(7, 8)]:
        draft_s = 0.002 * d
        verify_s = 0.01 + 0.001 * (d + 1)
        step_s = draft_s + verify_s + 0.0005 + 0.0001 * e
        t += step_s + (pre if not events else 0.0)
        events.append(NS(type="step", drafted=[0] * d, emitted=[0] * e, draft_s=draft_s, verify_s=verify_s,
                         step_s=step_s, elapsed_s=t))
    events.append(NS(type="summary", wall_s=t + 0.001))
    cost = calibrate(events)
    assert cost.draft_token_s == pytest.approx(0.002)
    assert cost.verify_s == pytest.approx({2: 0.012, 4: 0.014, 6: 0.016})
    assert cost.verify(3) == pytest.approx(0.013) and cost.verify(10) == pytest.approx(0.02)
    assert cost.step_s == pytest.approx(0.0005, abs=1e-9)
    assert cost.emit_token_s == pytest.approx(0.0001, abs=1e-9)
    assert cost.outside_s == pytest.approx(pre + 0.001)


def test_verify_outside_the_measured_windows():
    cost = CostModel(draft_token_s=0.001, verify_s={2: 0.010, 3: 0.012, 5: 0.016})
    assert cost.verify(1) == pytest.approx(0.008)
    assert cost.verify(4) == pytest.approx(0.014)
    assert cost.verify(7) == pytest.approx(0.020)
    flat = CostModel(draft_token_s=0.001, verify_s={2: 0.010, 3: 0.009})
    assert flat.verify(9) == pytest.approx(0.009)  # never extrapolated downwards


def test_adaptive_k_replays_a_live_run_fed_the_same_costs(bench_pair, traces):
    """adaptive-k plans from costs: the live decoder fed the cost model's prices takes the simulator's steps."""
    from gammatune_tui.engine.policies import AdaptiveK

    cost = CostModel(draft_token_s=0.002, verify_s={1: 0.01, 2: 0.011, 4: 0.013, 8: 0.02}, step_s=0.0005)

    class Priced(AdaptiveK):  # the test hook: the decoder's measured seconds replaced by the model's prices
        def observe_costs(self, draft_s, drafted, verify_s, verified):
            super().observe_costs(drafted * cost.draft_token_s, drafted, cost.verify(verified), verified)

    for g, params in ((1, {}), (4, {"gamma_min": 1}), (9, {"gamma_min": 2, "gamma_max": 12, "cooldown": 0})):
        s = PolicySettings.build("adaptive-k", g, **params)
        for t in traces:
            events = list(SpeculativeDecoder(bench_pair, Priced(g, s.params), SamplingConfig()).generate(
                t.prompt_ids, max_new_tokens=MAX_NEW))
            live, summary, ids = live_steps(events)
            sim = []
            rec = play_trace(t, s.make(), cost=cost, steps_out=sim)
            assert live == [(x.gamma, x.drafted, x.accepted, x.emitted) for x in sim], (g, t.prompt_id)
            assert ids == t.tokens[:MAX_NEW] and rec.tokens == summary.tokens
    # the plan really follows the costs: with drafting dearer than a target pass it shrinks to γ_min
    dear = CostModel(draft_token_s=0.05, verify_s={1: 0.01, 8: 0.012})
    steps = []
    play_trace(traces[0], PolicySettings.build("adaptive-k", 8, gamma_min=1).make(), cost=dear, steps_out=steps)
    assert steps[0].gamma == 8 and all(x.gamma == 1 for x in steps[1:])


def test_live_check_feeds_adaptive_k_the_live_timings(bench_pair, traces):
    """check_against_live replays a cost-planning policy with the live run's own step timings: step-exact."""
    s = PolicySettings.build("adaptive-k", 3, gamma_min=1, cooldown=0)
    cost = CostModel(draft_token_s=1.0, verify_s={1: 0.01})  # absurd prices, unused while live timings last
    for t in traces:
        events = _live(bench_pair, s, t.prompt_ids)
        check = check_against_live(t, s, events, cost)
        assert check.steps_equal and check.output_equal, (t.prompt_id, check)
