"""The sessions' log the screens share (chat, replay, compare panes) and the complete source protocol."""

from __future__ import annotations

import re
from pathlib import Path

from gammatune_tui.engine.events import StepEvent
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.recording import RecordingWriter
from gammatune_tui.session.replay import ReplaySource
from gammatune_tui.session.session_log import SessionLog
from gammatune_tui.session.source import DrafterSource, EventSource, PacedSource, SystemPromptSource
from gammatune_tui.session.stats import stats_of
from gammatune_tui.session.synthetic import SyntheticSource, synthetic_session

UI = Path(__file__).resolve().parents[2] / "gammatune_tui" / "ui"


def _two_sessions():
    one = synthetic_session("gammatune+", steps=4, seed=1)
    two = synthetic_session("specdecode", steps=3, seed=2)
    return one, two


def test_the_log_numbers_each_session_as_its_own_stream_does():
    one, two = _two_sessions()
    log = SessionLog()
    for ev in one + two:
        log.add(ev)
    steps_one = [e for e in one if isinstance(e, StepEvent)]
    steps_two = [e for e in two if isinstance(e, StepEvent)]
    assert log.steps == steps_one + steps_two and log.starts == [0, len(steps_one)]
    # each session's numbers are the one tally over its own stream: the same as the stats of that stream
    for stats, events in zip(log.sessions, (one, two)):
        want = stats_of(events)
        assert (stats.tokens, stats.steps, stats.acceptance_rate, stats.summary) == \
               (want.tokens, want.steps, want.acceptance_rate, want.summary)
    assert log.current is log.sessions[1]
    # a step's place: its session, and where that session's steps begin and end
    assert log.session_of(len(steps_one)) == (1, len(steps_one), len(steps_one) + len(steps_two))
    assert log.session_of(0) == (0, 0, len(steps_one))
    turns = log.turns()
    assert [list(t[1]) for t in turns] == [steps_one, steps_two]
    assert [t[0].method for t in turns] == ["gammatune+", "specdecode"]


def test_a_replay_stepping_back_redraws_the_running_session_from_its_header():
    one, two = _two_sessions()
    log = SessionLog()
    for ev in one + two:
        log.add(ev)
    log.drop_current()
    assert len(log.sessions) == 1 and log.steps == [e for e in one if isinstance(e, StepEvent)]
    for ev in two[:3]:   # the header and two steps, as the player gives them back
        log.add(ev)
    assert len(log.sessions) == 2 and len(log.current_steps()) == 2 and log.current.summary is None


def test_before_any_session_the_numbers_are_empty_and_hindsight_waits_for_one():
    log = SessionLog()
    assert log.current.steps == 0 and log.turns() == [] and log.current_steps() == []
    log.set_hindsight(None)
    assert log.current.hindsight is None


def test_every_source_is_a_complete_event_source_and_says_what_more_it_can_do(tmp_path):
    path = tmp_path / "rec.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(synthetic_session("gammatune"))
    replay = ReplaySource(path, speed=0)
    replay.prepare()
    live = LiveSource(process=False)   # nothing is loaded before prepare()
    synthetic = SyntheticSource()
    for src in (live, replay, synthetic):
        assert isinstance(src, EventSource), type(src).__name__
        assert src.hindsight is None and src.plain_speed is None
        src.close()
    assert replay.has_next_session and not live.has_next_session and not synthetic.has_next_session
    assert isinstance(live, PacedSource) and isinstance(synthetic, PacedSource) and not isinstance(replay, PacedSource)
    assert isinstance(live, SystemPromptSource) and not isinstance(synthetic, SystemPromptSource)
    assert isinstance(live, DrafterSource) and not isinstance(replay, DrafterSource)


def test_the_screens_ask_the_protocol_instead_of_probing_the_source():
    probes = [f"{p.relative_to(UI)}: {line.strip()}" for p in sorted(UI.rglob("*.py"))
              for line in p.read_text(encoding="utf-8").splitlines()
              if re.search(r"getattr\((self\.)?(source|job)\b", line)]
    assert probes == []
