"""`doctor --for`'s fixed-K prediction and `compare` live at that K: the parts of their agreement that are not timing.

The speed-ups themselves are timings (benchmarks/deploy_vs_live.py and the
GAMMATUNE_TIMED_TESTS test in test_deploy.py compare them); what must hold
exactly is that both play the same rule on the same prompt and budget (the
live race accepts, step by step, what the trace's replay accepts), that a
prediction with given costs is the simulator's fixed-K replay priced by
them, and that a drafting step's fixed cost is charged once per step.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gammatune_tui.bench.deploy.engines import BY_NAME
from gammatune_tui.bench.deploy.rank import Prices, rank_engine
from gammatune_tui.bench.doctor import examine as dr
from gammatune_tui.bench.doctor.timing import draft_line, robust_costs
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.simulate import SimStep, play_trace
from gammatune_tui.cli import main
from gammatune_tui.engine.policies import PolicySettings

PROMPT = "def add(a, b):"
N = 24


@pytest.fixture
def injected_costs(monkeypatch):
    """The doctor's timing pass replaced by fixed costs: its prediction is then a function of the traces alone."""
    def timing(pair, prompt, tokens, max_window, sampling=None):
        cost = CostModel(draft_token_s=1e-3, verify_s={1: 8e-3, 2: 9e-3, 5: 10e-3, 17: 14e-3}, step_s=3e-4,
                         draft_step_s=2e-3)
        return cost, 8e-3, []
    monkeypatch.setattr(dr, "timing_pass", timing)


def _run(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    cap = capsys.readouterr()
    assert exc.value.code == 0, cap.err
    return cap


def test_compare_live_at_the_best_k_accepts_what_the_doctors_trace_replay_accepts(injected_costs, tiny_pair_dirs,
                                                                                   tmp_path, capsys):
    t, d = tiny_pair_dirs
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"id": "a", "turns": [PROMPT]}) + "\n")
    doctor = tmp_path / "doctor.json"
    _run(capsys, ["doctor", "--target", str(t), "--draft", str(d), "--prompts", str(prompts), "-n", str(N),
                  "--gammas", "1,2,3,4", "--device", "cpu", "--threads", "1", "--raw", "--self-drafts", "none",
                  "--for", "vllm", "--json", str(doctor)])
    best = json.loads(doctor.read_text())["deploy"]["engines"][0]["best"]
    k = best["knobs"]["num_speculative_tokens"]
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text(PROMPT, encoding="utf-8")
    race = tmp_path / "race.json"
    _run(capsys, ["compare", "--print", "-f", str(prompt_file), "--raw", "--target", str(t), "--draft", str(d),
                  "--device", "cpu", "--threads", "1", "-M", "specdecode,gammatune+", "--gamma", str(k), "-n", str(N),
                  "-t", "0", "--repeats", "1", "--json", str(race)])
    spec = next(c for c in json.loads(race.read_text())["contestants"] if c["label"] == "specdecode")
    live = spec["speculative_decoding"]
    assert spec["tokens"] == N and spec["settings"]["gamma0"] == k
    # the same rule on the same prompt and budget: the doctor's acceptance length at K is the live one
    assert live["mean_acceptance_length"] == pytest.approx(best["mean_acceptance_length"])

    # and step by step: the trace of this prompt, replayed at K, accepts what the live race accepted
    from gammatune_tui.bench.sim import trace_record
    from gammatune_tui.engine.loading.models import load_pair

    pair = load_pair(str(t), str(d), device="cpu", threads=1)
    ids = pair.encode_prompt(PROMPT, raw=True)
    trace = trace_record.record_trace(pair, "a", ids, N, 16, pair.eos_ids)
    steps: list[SimStep] = []
    play_trace(trace, PolicySettings.build("specdecode", k).make(), N, None, steps)
    drafting = [s for s in steps if s.drafted]
    assert [s.accepted for s in drafting] == live["per_step_accepted"]
    assert [s.drafted for s in drafting] == live["per_step_drafted"]


def _fixed_trace():
    from gammatune_tui.bench.sim.simulate import Trace

    toks = list(range(10, 40))
    drafts = [t if i % 7 != 3 else 0 for i, t in enumerate(toks)]   # a miss every seven tokens
    off = {i: [toks[i + 1] if i + 1 < len(toks) else 1] * 8 for i in range(len(toks)) if drafts[i] != toks[i]}
    return Trace(prompt_id="p", prompt_ids=[3], tokens=toks, draft_ids=drafts, draft_prob=[0.9] * len(toks),
                 off_ids=off, off_prob={i: [0.9] * 8 for i in off}, off_depth=8, eos_ids=[1], max_new_tokens=30,
                 plain_s=0.3)


def test_a_given_cost_prediction_is_the_simulators_fixed_k_replay_with_a_per_step_draft_cost():
    trace = _fixed_trace()
    cost = CostModel(draft_token_s=1e-3, verify_s={1: 10e-3, 9: 12e-3}, step_s=5e-4, draft_step_s=2e-3)
    prices = Prices(cost, [trace.plain_s])
    for row in rank_engine(BY_NAME["vllm"], [trace], prices, [2, 3, 4, 6], 30).rows:
        k = row.setting.knobs["num_speculative_tokens"]
        steps: list[SimStep] = []
        rec = play_trace(trace, PolicySettings.build("specdecode", k).make(), 30, cost, steps)
        assert row.speedup == pytest.approx(trace.plain_s / rec.wall_s)
        drafting = sum(1 for s in steps if s.drafted)
        # each drafting step pays the per-step part once, each drafted token the per-token part
        assert rec.draft_s == pytest.approx(rec.drafted * 1e-3 + drafting * 2e-3)
        assert rec.wall_s == pytest.approx(rec.draft_s + rec.verify_s + rec.steps * 5e-4)


def _step(d: int, draft_s: float) -> SimpleNamespace:
    return SimpleNamespace(type="step", drafted=[0] * d, draft_s=draft_s, verify_s=0.01, step_s=draft_s + 0.011,
                           elapsed_s=0.0, emitted=[0], accepted=0)


def test_the_timing_pass_fits_drafting_as_a_per_step_and_a_per_token_part():
    a, b = 1.5e-3, 0.8e-3
    steps = [_step(d, a + b * d + noise) for d in (1, 2, 3, 4, 6, 9, 16) for noise in (0.0, 4e-4, 9e-4)]
    fit = draft_line(steps)
    assert fit == pytest.approx((a, b), rel=1e-6)
    cost = robust_costs(steps)
    assert (cost.draft_step_s, cost.draft_token_s) == pytest.approx((a, b), rel=1e-6)
    # a window of 3 is priced as it was timed, not at the long windows' cost per token
    assert cost.draft(3) == pytest.approx(a + 3 * b)
    # too few window sizes: the cost per token alone, as before
    few = [_step(d, a + b * d) for d in (2, 4) for _ in range(3)]
    assert draft_line(few) is None and robust_costs(few).draft_step_s == 0.0


def test_a_cost_model_without_the_per_step_draft_cost_writes_and_prices_as_before():
    old = CostModel(draft_token_s=1e-3, verify_s={1: 10e-3})
    assert "draft_step_s" not in old.to_json()
    again = CostModel.from_json(old.to_json())
    assert again == old and again.draft(4) == 4e-3
    new = CostModel(draft_token_s=1e-3, verify_s={1: 10e-3}, draft_step_s=2e-3)
    assert CostModel.from_json(new.to_json()) == new
