"""The simulator's clock (bench/sim/cost_model.py): steady prices, one per window the methods use.

The held-out policy study found the spread between timing passes larger than
most gaps between methods; these tests hold the two things that steady it: a
busy spell that slows a few steps does not move a window's price, and every
window an adaptive method uses (γ up to 9, so k = 2 … 10 tokens verified)
is priced from its own steps rather than interpolated between neighbours.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from gammatune_tui.bench.sim.cost_model import CALIBRATION_GAMMAS, calibrate, typical


def _session(steps: list[tuple[int, float, float]]) -> list:
    """Step events (drafted, draft_s, verify_s) of one session, one token emitted each, then its summary."""
    out, t = [], 0.0
    for d, draft_s, verify_s in steps:
        step_s = draft_s + verify_s + 1e-4
        t += step_s
        out.append(NS(type="step", drafted=[0] * d, emitted=[0], draft_s=draft_s, verify_s=verify_s, step_s=step_s,
                      elapsed_s=t))
    out.append(NS(type="summary", wall_s=t))
    return out


def test_a_busy_spell_in_a_few_steps_barely_moves_a_windows_price():
    # 30 steps verifying 3 tokens at 5.0–5.2 ms, and 3 of them caught by another job (40 ms, 20× the draft)
    steady = [(2, 1.6e-3 + 1e-5 * (i % 3), 5.0e-3 + 1e-4 * (i % 3)) for i in range(30)]
    spiked = steady[:10] + [(2, 32e-3, 40e-3)] * 3 + steady[13:]
    calm, busy = calibrate(_session(steady)), calibrate(_session(spiked))
    assert busy.verify(3) == pytest.approx(calm.verify(3), rel=0.01)  # a plain mean would say 8.5 ms
    assert busy.draft_token_s == pytest.approx(calm.draft_token_s, rel=0.01)  # a plain mean: 2.6× dearer


def test_every_window_the_timing_pass_runs_gets_its_own_price():
    """A verify curve that is not smooth in k (the static runner's shapes) is priced as measured, not interpolated."""
    curve = {k: 3.5e-3 + 0.4e-3 * k + (0.8e-3 if k in (4, 7) else 0.0) for k in range(1, 26)}
    events = []
    for g in CALIBRATION_GAMMAS:  # what a timing pass runs: specdecode at each γ0, a full window every step
        events += _session([(g, 0.7e-3 * g, curve[g + 1])] * 20)
    cost = calibrate(events)
    gamma_max = 8  # the adaptive methods' shipped ceiling; a window drafts up to 9 with --gamma 9
    for k in range(2, gamma_max + 3):
        assert k in cost.verify_s and cost.verify(k) == pytest.approx(curve[k])
    assert cost.verify(4) > (cost.verify(3) + cost.verify(5)) / 2  # the dear window stays dear
    assert cost.draft_token_s == pytest.approx(0.7e-3)


def test_typical_leaves_out_only_the_steps_another_job_slowed():
    assert typical([1.0]) == 1.0 and typical([1.0, 3.0]) == 2.0
    assert typical([1.0, 2.0, 90.0]) == 1.5   # 90 is 45× the median: another job's
    assert typical([1.0] * 8 + [50.0, 60.0]) == 1.0
    # the ordinary slower steps a live session pays too are kept (a trimmed mean dropped the top fifth: 1.0 here)
    assert typical([1.0] * 8 + [1.5, 1.9]) == pytest.approx(1.14)
    with pytest.raises(ValueError):
        typical([])


def test_a_timing_pass_takes_every_window_in_turn_along_one_answer(bench_pair):
    """One session takes each window in turn, there and back, γ = 0 (a skipped draft: costaware's γ = 0, the
    oracle's "do not draft") among them, so each is timed all along an answer's context, not in a short
    session of its own; each window is then priced from its own steps."""
    from gammatune_tui.bench.live.protocol import PromptIds
    from gammatune_tui.bench.modes.trace_cache import cycle_sessions, time_decoder

    prompt = PromptIds("p", [5, 9, 13, 17])
    events: list = []
    cycle_sessions(bench_pair, prompt, 40, [0, 1, 2], events)
    steps = [e for e in events if e.type == "step"]
    assert [s.gamma for s in steps[:8]] == [0, 1, 2, 2, 1, 0, 0, 1]
    assert not steps[0].drafted and len(steps[2].drafted) == 2
    cost, passes = time_decoder(bench_pair, prompt, 40, 2, 0.0)
    for c in (cost, *passes):
        assert set(c.verify_s) == {1, 2, 3}  # k = 1 (γ = 0), 2 and 3 (γ = 1, 2): each its own price


def test_an_answer_that_ends_early_is_followed_by_another_until_each_window_has_its_samples(bench_pair):
    from gammatune_tui.bench.live.protocol import PromptIds
    from gammatune_tui.bench.modes.trace_cache import CYCLE_SAMPLES, MAX_CYCLE_SESSIONS, cycle_sessions

    events: list = []
    # 12 tokens: 6 to 12 steps an answer (at most 13 tokens every 6 steps), and 15 to plan each window 5 times
    cycle_sessions(bench_pair, PromptIds("p", [5, 9, 13, 17]), 12, [0, 1, 2], events)
    sessions = sum(e.type == "summary" for e in events)
    steps = [e for e in events if e.type == "step"]
    planned = {w: sum(s.gamma == w for s in steps) for w in (0, 1, 2)}
    assert 1 < sessions < MAX_CYCLE_SESSIONS
    assert min(planned.values()) >= CYCLE_SAMPLES
    order = [0, 1, 2, 2, 1, 0]   # each session goes on where the one before stopped
    assert [s.gamma for s in steps] == [order[i % 6] for i in range(len(steps))]


def test_target_only_is_priced_by_the_pass_that_prices_the_methods(bench_pair):
    """"× target-only" divides like by like: the timing pass times target-only decoding too, and the simulator's
    target-only row and the oracle's speed-up use that, not the traces' own recording time (taken at another
    load: on the demo pair the sampled traces' 21 ms a token, recorded at load 8, made every method look 5× faster
    than target-only in a table whose methods were priced on a quiet machine)."""
    from types import SimpleNamespace

    from gammatune_tui.bench.live.protocol import PromptIds
    from gammatune_tui.bench.modes.trace_cache import time_decoder
    from gammatune_tui.bench.results import PLAIN
    from gammatune_tui.bench.sim import oracle
    from gammatune_tui.bench.sim.cost_model import CostModel
    from gammatune_tui.bench.sim.simulate import plain_records

    cost, passes = time_decoder(bench_pair, PromptIds("p", [5, 9, 13, 17]), 12, 2, 0.0)
    assert cost.plain_token_s > 0 and all(c.plain_token_s > 0 for c in passes)
    assert CostModel.from_json(cost.to_json()).plain_token_s == cost.plain_token_s

    trace = SimpleNamespace(prompt_id="p", tokens=list(range(100)), plain_s=9.0, ended_eos=False)
    timed = CostModel(draft_token_s=0.001, verify_s={1: 0.004, 2: 0.005}, plain_token_s=0.003)
    (rec,) = plain_records([trace], cost=timed)
    assert rec.method == PLAIN and rec.wall_s == pytest.approx(0.3)        # 100 tokens × 3 ms, not the recorded 9 s
    assert plain_records([trace])[0].wall_s == 9.0                          # no cost model: as recorded
    untimed = CostModel(draft_token_s=0.001, verify_s={1: 0.004, 2: 0.005})  # a model kept before this timing
    assert plain_records([trace], cost=untimed)[0].wall_s == 9.0
    assert oracle.summarize([trace], [], timed).plain_s == pytest.approx(0.3)
