"""Sampled traces: the coupled rule is lossless, and replays agree with live sampled runs in law."""

from __future__ import annotations

import json
import random

import pytest

from gammatune_tui.bench.sim.simulate import Trace, live_steps, play_trace
from gammatune_tui.bench.sim.oracle import oracle_run
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.trace_sampled import coupled_token, record_sampled_trace
from gammatune_tui.cli import main
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder

PROMPTS = {"p0": [5, 9, 13, 22, 7], "p1": [3, 4, 5, 6, 7, 8, 30, 31], "p2": [40]}
MAX_NEW = 40
DEPTH = 11
SEEDS = 20
T = 0.7
# tokens per step, replayed over SEEDS traces per prompt vs live over SEEDS seeds per prompt: both are samples
# of the same law (~750 steps each), so they differ by sampling noise only (over 300 seeds per prompt: −0.2 % to −1.5 %)
TOLERANCE = 0.1


def test_coupled_rule_gives_the_target_law_whatever_the_draft():
    """y follows p (chi-square), x follows q, and y == x exactly when x is accepted."""
    import torch

    p = torch.tensor([0.5, 0.2, 0.2, 0.1, 0.0])
    q = torch.tensor([0.1, 0.6, 0.1, 0.1, 0.1])
    rng = random.Random(3)
    n = 20000
    cx, cy = [0] * 5, [0] * 5
    accepted = 0
    for _ in range(n):
        x, y = coupled_token(p, q, rng.random(), rng.random(), rng.random())
        cx[x] += 1
        cy[y] += 1
        accepted += x == y
    chi_p = sum((c - n * float(pi)) ** 2 / (n * float(pi)) for c, pi in zip(cy, p) if pi > 0)
    chi_q = sum((c - n * float(qi)) ** 2 / (n * float(qi)) for c, qi in zip(cx, q))
    assert cy[4] == 0                      # never a token the target cannot serve
    assert chi_p < 18.5 and chi_q < 18.5   # 4 degrees of freedom, p = 0.001
    # acceptance rate Σ min(p, q) = 0.1 + 0.2 + 0.1 + 0.1 = 0.5
    assert abs(accepted / n - 0.5) < 0.02


@pytest.fixture(scope="module")
def sampled_traces(bench_pair):
    return {(k, s): record_sampled_trace(bench_pair, k, v, MAX_NEW, DEPTH, bench_pair.eos_ids,
                                         SamplingConfig(temperature=T, seed=s))
            for k, v in PROMPTS.items() for s in range(SEEDS)}


def test_trace_structure_and_round_trip(sampled_traces):
    for t in sampled_traces.values():
        assert t.sampled and t.sampling["temperature"] == T
        misses = [i for i, (x, y) in enumerate(zip(t.draft_ids, t.tokens)) if x != y]
        assert set(t.off_ids) == set(misses)  # a rejection is exactly where the draft's token is not the text
        assert all(top >= ch for top, ch in zip(t.draft_top, t.draft_prob))
        assert Trace.from_json(json.loads(json.dumps(t.to_json()))) == t
    some = list(sampled_traces.values())
    # the chosen token is not always the draft's top-1 (else these were greedy traces)
    assert any(top > ch for t in some for top, ch in zip(t.draft_top, t.draft_prob))
    # the same seed and prompt give the same trace; another seed another one
    assert some[0].tokens != some[1].tokens


CASES = [("specdecode", 4, {}), ("gammatune+", 4, {"tau": 0.5}), ("assistant-threshold", 6, {"tau": 0.3}),
         ("hf-heuristic", 2, {}), ("gammatune", 2, {"gamma_min": 1}),
         # the peers (issue 27): the stop rules at thresholds that end windows on this pair's served laws
         ("p-min", 6, {"p_min": 0.6}), ("adaedl", 6, {"edl_lambda": 0.7}), ("svip", 6, {"svip_h": 0.2}),
         ("ema-tiers", 4, {}), ("ucb", 4, {"gamma_max": 4})]


@pytest.mark.parametrize("method,gamma0,params", CASES)
def test_replay_agrees_with_live_sampled_runs_in_tokens_per_step(bench_pair, sampled_traces, method, gamma0,
                                                                 params):
    s = PolicySettings.build(method, gamma0, **params)
    sim_tok = sim_steps = live_tok = live_n = 0
    for (k, seed), t in sampled_traces.items():
        r = play_trace(t, s.make())
        sim_tok, sim_steps = sim_tok + r.tokens, sim_steps + r.steps
        events = list(SpeculativeDecoder(bench_pair, s, SamplingConfig(temperature=T, seed=1000 + seed))
                      .generate(PROMPTS[k], max_new_tokens=MAX_NEW))
        steps, _, _ = live_steps(events)
        live_tok, live_n = live_tok + sum(x[3] for x in steps), live_n + len(steps)
    sim_tps, live_tps = sim_tok / sim_steps, live_tok / live_n
    assert abs(sim_tps / live_tps - 1) < TOLERANCE, (sim_tps, live_tps)


def test_the_peers_sampled_thresholds_do_end_windows(sampled_traces):
    """The peers' cases above are not vacuous: at those thresholds their stop rules end windows on these traces."""
    for method, gamma0, params in CASES:
        if method not in ("p-min", "adaedl", "svip"):
            continue
        steps = []
        for t in sampled_traces.values():
            play_trace(t, PolicySettings.build(method, gamma0, **params).make(), steps_out=steps)
        early = sum(x.early_stop for x in steps) / len(steps)
        assert 0.05 < early < 0.95, (method, early)


def test_a_greedy_trace_would_not_pass_that_check(bench_pair, sampled_traces):
    """The tolerance separates: greedy acceptance (x == argmax) on sampled text is far from the sampled law."""
    from gammatune_tui.bench.sim.trace_record import record_trace

    s = PolicySettings.build("specdecode", 4)
    greedy = [record_trace(bench_pair, k, v, MAX_NEW, DEPTH, bench_pair.eos_ids) for k, v in PROMPTS.items()]
    g_tps = sum(play_trace(t, s.make()).tokens for t in greedy) / sum(play_trace(t, s.make()).steps for t in greedy)
    recs = [play_trace(t, s.make()) for t in sampled_traces.values()]
    s_tps = sum(r.tokens for r in recs) / sum(r.steps for r in recs)
    assert abs(g_tps / s_tps - 1) > TOLERANCE


def test_oracle_plays_sampled_traces(sampled_traces):
    cost = CostModel(draft_token_s=0.001, verify_s={1: 0.01, 2: 0.011, 8: 0.015})
    for t in list(sampled_traces.values())[:5]:
        run = oracle_run(t, cost)
        assert run.record.tokens == len(t.tokens)
        for g in (1, 3, 6):
            assert play_trace(t, PolicySettings.build("specdecode", g).make(), cost=cost).wall_s >= run.best_s - 1e-12


def test_bench_simulate_at_a_temperature(tiny_pair_dirs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path / "cache"))
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"id": "a", "turns": ["def add(a, b):"]}\n{"id": "b", "turns": ["class Stack:"]}\n')
    t, d = tiny_pair_dirs
    out = tmp_path / "b.json"
    args = ["bench", "--simulate", "-t", "0.7", "--top-k", "20", "--target", str(t), "--draft", str(d),
            "--device", "cpu", "--prompts", str(prompts), "-n", "12", "--gammas", "2,4",
            "--methods", "specdecode,gammatune+", "--raw", "--check-live", "1"]
    with pytest.raises(SystemExit) as exc:
        main([*args, "-o", str(out)])
    cap = capsys.readouterr()
    assert exc.value.code == 0, cap.err
    assert "Table 2 (simulated)" in cap.out and "sampled" in cap.out
    data = json.loads(out.read_text())
    assert data["config"]["sampling"]["temperature"] == 0.7 and data["config"]["sampling"]["top_k"] == 20
    assert data["live_check"]["sampled"] and data["live_check"]["rows"]
    # the sampled traces are their own cache entry, beside (not instead of) the greedy ones
    with pytest.raises(SystemExit):
        main([*args[:2], *args[4:], "-o", str(tmp_path / "g.json"), "--check-live", "0"])
    capsys.readouterr()
    assert len(list((tmp_path / "cache" / "traces").glob("*.json"))) == 2


def test_tune_runs_on_sampled_traces(tiny_pair_dirs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path / "cache"))
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"id": "a", "turns": ["def add(a, b):"]}\n{"id": "b", "turns": ["class Stack:"]}\n')
    t, d = tiny_pair_dirs
    out = tmp_path / "t.json"
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--tune", "-t", "0.7", "--check-live", "0", "--target", str(t), "--draft", str(d),
              "--device", "cpu", "--prompts", str(prompts), "-n", "12", "--gammas", "2,4", "--raw", "-o", str(out)])
    cap = capsys.readouterr()
    assert exc.value.code == 0, cap.err
    data = json.loads(out.read_text())
    assert data["config"]["sampling"]["temperature"] == 0.7
    assert data["tune"]["candidates"] and {r["name"] for r in data["tune"]["shares"]["rows"]} >= {"perfect signal"}
