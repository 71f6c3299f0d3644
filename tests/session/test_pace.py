"""The live pace (steps per second): it holds the decoder between steps, and never counts in the timings."""

from __future__ import annotations

import threading
import time

import pytest

from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.pace import PACES, StepPacer, at_pace_end, check_pace, next_pace, pace_label, paced
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.stats import stats_of


def _clocked_session(n_steps: int, step_s: float = 0.0):
    """A stand-in for the decoder: its clocks run from its start, as SpeculativeDecoder's do (waits included)."""
    t0 = time.perf_counter()
    yield SessionHeader(target="t", draft="d", tokenizer="t", device="cpu", dtype="float32", method="specdecode",
                        gamma0=1, params={}, sampling={}, max_new_tokens=n_steps, prompt_ids=[1], prompt="p")
    for i in range(n_steps):
        start = time.perf_counter()
        time.sleep(step_s)
        now = time.perf_counter()
        yield StepEvent(step=i, method="specdecode", params={}, gamma=1, drafted=[], accepted=0,
                        target_token=None, emitted=[], gamma_next=1, draft_s=0.0, verify_s=now - start,
                        step_s=now - start, elapsed_s=now - t0)
    wall = time.perf_counter() - t0
    yield SessionSummary(tokens=n_steps, steps=n_steps, acceptance_rate=0.0, tokens_per_step=1.0,
                         tokens_per_s=n_steps / wall, stop_reason="max_new_tokens", wall_s=wall)


def test_paced_takes_the_waits_out_of_the_clocks():
    pacer = StepPacer(50.0)                       # 20 ms a step; the steps themselves take microseconds
    t0 = time.perf_counter()
    events = list(paced(_clocked_session(8), pacer))
    outside = time.perf_counter() - t0
    steps = [e for e in events if isinstance(e, StepEvent)]
    summary = events[-1]
    assert outside >= 0.95 * 7 / 50 and pacer.waited_s > 0   # the pace really held the session back
    # the recorded clocks count the steps only: what the waits added is gone
    assert summary.wall_s <= outside - pacer.waited_s + 0.005
    assert steps[-1].elapsed_s <= summary.wall_s
    assert summary.wall_s < pacer.waited_s          # without the correction the wall would include them
    assert summary.tokens_per_s == pytest.approx(summary.tokens / summary.wall_s)
    assert all(b.elapsed_s >= a.elapsed_s for a, b in zip(steps, steps[1:]))
    unpaced = list(paced(_clocked_session(8), None))
    assert unpaced[-1].wall_s < 0.5 * pacer.waited_s  # the same session unpaced: same order of time


def test_a_live_paced_session_records_the_speed_of_an_unpaced_one(tiny_pair, tmp_path):
    """draft_s, verify_s and tokens/s in the stats and the recording exclude the pace's waits."""
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), pair=tiny_pair, max_new_tokens=16,
                     raw=True, pace=25.0)
    src.prepare(lambda *_: None)
    path = tmp_path / "paced.jsonl"
    writer = RecordingWriter(path)
    t0 = time.perf_counter()
    for ev in src.events("hello"):
        writer.write(ev)
    outside = time.perf_counter() - t0
    writer.close()
    waited = src.link.pacer.waited_s
    session = read_recording(path).sessions[0]
    steps, summary = session.steps, session.summary
    assert len(steps) >= 3 and outside >= 0.95 * (len(steps) - 1) / 25 and waited > 0   # the pace held
    stats = stats_of([session.header, *steps, summary])
    compute = sum(s.draft_s + s.verify_s for s in steps)
    assert stats.draft_s + stats.verify_s == pytest.approx(compute)
    assert summary.wall_s <= outside - waited + 0.01          # the recording's clock skips the waits
    assert steps[-1].elapsed_s <= summary.wall_s
    assert summary.tokens_per_s == pytest.approx(summary.tokens / summary.wall_s)
    assert stats.tokens_per_s == pytest.approx(stats.tokens / steps[-1].elapsed_s)
    assert stats.tokens_per_s > summary.tokens / outside      # faster than the paced wall clock says


def test_a_new_pace_or_a_stop_ends_a_wait_at_once():
    for act in ("faster", "stop"):
        pacer = StepPacer(0.2)                    # a 5-second wait
        pacer.begin()
        done = threading.Event()
        waited = []
        threading.Thread(target=lambda: (waited.append(pacer.wait()), done.set()), daemon=True).start()
        time.sleep(0.1)
        assert not done.is_set()
        pacer.set(0.0) if act == "faster" else pacer.interrupt()
        assert done.wait(2.0), act
        assert waited[0] < 2.0


def test_pace_values_and_the_key_steps_stopping_at_both_ends():
    assert PACES[0] == 0.0 and list(PACES[1:]) == sorted(PACES[1:], reverse=True)
    seen, p = [], 0.0
    for _ in range(len(PACES)):
        p = next_pace(p)
        seen.append(p)
    assert seen == [*PACES[1:], PACES[-1]]                 # F9 goes slower down to 0.5, and stays there
    assert next_pace(4.0, -1) == 10.0 and next_pace(10.0, -1) == 0.0
    # issue 40 row 12g: faster at full speed wrapped to 0.5 steps/s, slower at 0.5 to full speed
    assert next_pace(0.0, -1) == 0.0 and next_pace(PACES[-1]) == PACES[-1]
    assert at_pace_end(0.0, -1).startswith("already at full speed") and at_pace_end(0.0, 1) == ""
    assert at_pace_end(0.5, 1).startswith("already at 0.5 steps/s, the slowest") and at_pace_end(0.5, -1) == ""
    assert next_pace(3.0) == 2.0 and next_pace(3.0, -1) == 4.0   # a typed rate joins the steps
    assert next_pace(0.2) == 0.2 and next_pace(0.2, -1) == 0.5   # slower than the slowest listed: stays
    assert next_pace(500.0, -1) == 0.0 and next_pace(500.0) == 10.0
    assert pace_label(0) == "full speed" and pace_label(2) == "2 steps/s" and pace_label(0.5) == "0.5 steps/s"
    for bad in (-1, float("nan"), "2", True):
        with pytest.raises(InvalidParameter, match="pace"):
            check_pace(bad)


def test_the_decoder_process_obeys_pace_and_stop_between_steps(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(),
                     load_kwargs={"target": str(t), "draft": str(d), "device": "cpu", "dtype": "float32",
                                  "threads": 1}, max_new_tokens=60, raw=True, pace=0.1)
    try:
        src.prepare(lambda *_: None)
        t0 = time.perf_counter()
        events = []
        for ev in src.events("hello"):
            events.append(ev)
            if isinstance(ev, StepEvent):
                src.stop()           # the child is now waiting 10 s for the pace: the stop must end it at once
        assert events[-1].stop_reason == "stopped"
        assert time.perf_counter() - t0 < 5.0
        src.set_pace(0.0)            # full speed again: a whole 60-token turn runs through
        second = list(src.events("again"))
        assert second[-1].stop_reason in ("max_new_tokens", "eos")
    finally:
        src.close()
