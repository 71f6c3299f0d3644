"""ReplaySource: record → replay equality, pacing and the thread-safe player controls."""

from __future__ import annotations

import threading

import pytest

from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.errors import InvalidParameter, RecordingError
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.pacing import MAX_STEP_WAIT_S, check_speed, schedule, step_durations
from gammatune_tui.session.recording import resolve_recording
from gammatune_tui.session.replay import ReplaySource, is_comparison
from gammatune_tui.session.source import EventSource
from gammatune_tui.session.stats import stats_of
from gammatune_tui.session.synthetic import synthetic_session


def _record(tmp_path, *sessions, name="rec.jsonl"):
    path = tmp_path / name
    with RecordingWriter(path) as w:
        for events in sessions:
            w.write_all(events)
    return path


def _text(events):
    return "".join(t.text for e in events if isinstance(e, StepEvent) for t in e.emitted)


def test_is_an_event_source_and_read_only(tmp_path):
    src = ReplaySource(_record(tmp_path, synthetic_session("gammatune")), speed=0)
    assert isinstance(src, EventSource)
    assert src.read_only is True
    assert src.title == "replay: rec.jsonl"


def test_record_then_replay_gives_same_events_transcript_and_stats(tmp_path):
    live = synthetic_session("gammatune+", seed=3)
    src = ReplaySource(_record(tmp_path, live), speed=0)
    src.prepare(lambda stage, frac: None)
    replayed = list(src.events(None))
    assert [e.to_json() for e in replayed] == [e.to_json() for e in live]
    assert _text(replayed) == _text(live) and _text(live)
    a, b = stats_of(live), stats_of(replayed)
    for attr in ("tokens", "steps", "acceptance_rate", "tokens_per_step", "tokens_per_s", "draft_calls",
                 "per_position", "c", "modeled_cost_s"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert list(src.events(None)) == []  # no second session


def test_sessions_are_played_one_per_call(tmp_path):
    one = synthetic_session("specdecode", label="specdecode")
    two = synthetic_session("gammatune", label="gammatune")
    src = ReplaySource(_record(tmp_path, one, two), speed=0)
    assert src.has_next_session
    first = list(src.events(None))
    assert isinstance(first[0], SessionHeader) and first[0].label == "specdecode"
    assert src.has_next_session
    second = list(src.events(None))
    assert second[0].label == "gammatune" and isinstance(second[-1], SessionSummary)
    assert not src.has_next_session and src.at_end


def test_request_is_ignored(tmp_path):
    from gammatune_tui.engine.policies import PolicySettings

    src = ReplaySource(_record(tmp_path, synthetic_session("gammatune")), speed=0)
    src.request(PolicySettings.build("specdecode"))
    assert {e.method for e in src.events(None) if isinstance(e, StepEvent)} == {"gammatune"}


def test_step_durations_use_elapsed_then_step_then_parts():
    events = synthetic_session("gammatune", max_new_tokens=20)
    steps = [e for e in events if isinstance(e, StepEvent)]
    d = step_durations(events)
    assert d[0] == 0.0 and d[-1] == 0.0
    assert d[1:-1] == pytest.approx([s.step_s for s in steps])
    sched = schedule(events)
    assert sched[-1] == pytest.approx(steps[-1].elapsed_s)


def test_hostile_timings_are_capped_and_never_negative():
    import dataclasses

    events = synthetic_session("specdecode", max_new_tokens=12)
    steps = [i for i, e in enumerate(events) if isinstance(e, StepEvent)]
    events[steps[0]] = dataclasses.replace(events[steps[0]], elapsed_s=1e300, step_s=1e300)
    events[steps[1]] = dataclasses.replace(events[steps[1]], elapsed_s=0.0, step_s=-5.0, draft_s=-1, verify_s=-1)
    d = step_durations(events)
    assert all(x >= 0 for x in d)
    sched = schedule(events)
    assert sched[steps[0]] <= MAX_STEP_WAIT_S + 1e-9


class FakeClock:
    """Time that moves only when the player waits, so pacing is checked without sleeping."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_pace_follows_recorded_times_scaled_by_speed(tmp_path, monkeypatch):
    events = synthetic_session("gammatune", max_new_tokens=30)
    clock = FakeClock()
    waits: list[float] = []
    src = ReplaySource(_record(tmp_path, events), speed=2.0, clock=clock)

    def fake_wait(timeout=None):
        assert timeout is not None, "a running player never waits without a timeout"
        waits.append(timeout)
        clock.t += timeout
        return False

    monkeypatch.setattr(src._cond, "wait", fake_wait)
    out = list(src.events(None))
    assert len(out) == len(events)
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert sum(waits) == pytest.approx(steps[-1].elapsed_s / 2.0)
    assert clock.t == pytest.approx(steps[-1].elapsed_s / 2.0)


def test_speed_zero_never_waits(tmp_path, monkeypatch):
    src = ReplaySource(_record(tmp_path, synthetic_session("gammatune")), speed=0)
    monkeypatch.setattr(src._cond, "wait", lambda timeout=None: pytest.fail("waited at speed 0"))
    assert len(list(src.events(None))) > 3


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "fast", True])
def test_bad_speed_is_refused(bad):
    with pytest.raises(InvalidParameter, match="speed"):
        check_speed(bad)


def _consume(src, out, done):
    def run():
        for ev in src.events(None):
            out.append(ev)
            done.set()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _wait_for(pred, timeout=10.0):
    import time
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("condition not reached")
        time.sleep(0.002)


def test_pause_step_forward_step_back_resume_and_jump(tmp_path):
    events = synthetic_session("gammatune+", max_new_tokens=40)
    src = ReplaySource(_record(tmp_path, events), speed=0, paused=True)
    out: list = []
    t = _consume(src, out, threading.Event())
    _wait_for(lambda: len(out) == 1)          # the header is shown even when paused
    assert isinstance(out[0], SessionHeader) and src.paused
    src.step_forward()
    _wait_for(lambda: len(out) == 2)
    src.step_forward(2)
    _wait_for(lambda: len(out) == 4)
    assert src.position == 4
    shown = src.step_back()
    assert src.paused and src.position == 3 and shown == events[:3]
    shown = src.step_back(100)
    assert shown == events[:1] and src.position == 1  # the header always stays
    src.step_forward()
    _wait_for(lambda: len(out) == 5)
    assert out[-1] == events[1]                # playing on from the rewound position
    src.jump_to_end()
    t.join(10)
    assert not t.is_alive()
    assert out[-1] == events[-1] and src.position == len(events)


def test_resume_and_stop_while_waiting(tmp_path):
    events = synthetic_session("specdecode", max_new_tokens=40)
    src = ReplaySource(_record(tmp_path, events), speed=0, paused=True)
    out: list = []
    t = _consume(src, out, threading.Event())
    _wait_for(lambda: len(out) == 1)
    assert src.toggle_pause() is False
    _wait_for(lambda: len(out) == len(events))
    t.join(10)
    # stop while paused mid-way ends the iteration without inventing a summary
    src2 = ReplaySource(_record(tmp_path, events, name="b.jsonl"), speed=0, paused=True)
    out2: list = []
    t2 = _consume(src2, out2, threading.Event())
    _wait_for(lambda: len(out2) == 1)
    src2.stop()
    t2.join(10)
    assert not t2.is_alive() and out2 == events[:1]


def test_speed_change_wakes_a_long_wait(tmp_path):
    events = synthetic_session("specdecode", max_new_tokens=10, t_draft=1.0)  # ~6 s per step recorded
    src = ReplaySource(_record(tmp_path, events), speed=0.001)
    out: list = []
    t = _consume(src, out, threading.Event())
    _wait_for(lambda: len(out) == 1)
    src.set_speed(0)
    t.join(10)
    assert not t.is_alive() and len(out) == len(events)


def test_truncated_recording_replays_its_prefix_with_a_warning(tmp_path):
    events = synthetic_session("gammatune", max_new_tokens=30)
    path = _record(tmp_path, events)
    data = path.read_bytes()
    cut = data[: data.rindex(b"\n", 0, len(data) - 1) - 40]  # mid-way through the second-to-last line
    path.write_bytes(cut)
    rec = read_recording(path)
    assert "cut off" in rec.warning and str(path) in rec.warning and "\n" not in rec.warning
    src = ReplaySource(rec, speed=0)
    assert src.warning == rec.warning
    out = list(src.events(None))
    n_lines = cut.count(b"\n")
    assert out == events[:n_lines]
    assert stats_of(out).summary is None


def test_resolve_bare_name_finds_shipped_recording(tmp_path, monkeypatch):
    import gammatune_tui.session.recording as recording_mod

    d = tmp_path / "demo_prompts" / "recordings"
    d.mkdir(parents=True)
    f = d / "five-methods.jsonl"
    f.write_text("")
    monkeypatch.setattr(recording_mod, "demo_prompts_dir", lambda: tmp_path / "demo_prompts")
    monkeypatch.chdir(tmp_path)
    assert resolve_recording("five-methods") == f
    assert resolve_recording("five-methods.jsonl") == f
    assert resolve_recording("nope") == recording_mod.Path("nope")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)   # outside a checkout: the README's relative path finds the installed copy
    assert resolve_recording("demo_prompts/recordings/five-methods.jsonl") == f


def test_missing_file_is_a_recording_error(tmp_path):
    src = ReplaySource(tmp_path / "missing.jsonl")
    with pytest.raises(RecordingError, match="missing.jsonl"):
        src.prepare()


def test_is_comparison(tmp_path):
    compare = _record(tmp_path, synthetic_session("specdecode"), synthetic_session("gammatune"), name="c.jsonl")
    assert is_comparison(read_recording(compare))
    single = _record(tmp_path, synthetic_session("specdecode"), name="s.jsonl")
    assert not is_comparison(read_recording(single))


def test_step_back_after_the_end_plays_on_from_there(tmp_path):
    events = synthetic_session("gammatune", max_new_tokens=30)
    src = ReplaySource(_record(tmp_path, events), speed=0)
    assert list(src.events(None)) == events
    shown = src.step_back()          # takes back the summary and the last step
    assert shown == events[:-2] and src.paused
    src.resume()
    assert list(src.events(None)) == events[-2:]   # the rest of the same session, no new header
    assert list(src.events(None)) == []
