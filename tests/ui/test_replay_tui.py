"""Replay in the chat screen: plays a recording, the player keys, the header line, rewind safety."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager


from gammatune_tui.engine.events import StepEvent
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.stats import stats_of
from gammatune_tui.session.synthetic import synthetic_session
from gammatune_tui.ui.app import make_replay_app
from gammatune_tui.ui.screens.replay import ReplayChatScreen

from uihelpers import emitted_text as _text, wait_until

HOSTILE = "\x1b[31mRED\x1b[0m [bold]markup[/bold] \r\x07"


def _recording(tmp_path, *sessions):
    path = tmp_path / "rec.jsonl"
    with RecordingWriter(path) as w:
        for s in sessions:
            w.write_all(s)
    return read_recording(path)


async def _until(pilot, pred, timeout=20.0):
    await wait_until(pilot, pred, timeout, what="condition")


def _paused_replay(tmp_path):
    """A gammatune session, its steps, and a replay app that starts paused before the first step."""
    events = synthetic_session("gammatune", seed=1)
    steps = [e for e in events if isinstance(e, StepEvent)]
    return events, steps, make_replay_app(_recording(tmp_path, events), speed=0, paused=True)


@asynccontextmanager
async def _loaded(app):
    """The running replay app once the recording is loaded: (pilot, screen)."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await _until(pilot, lambda: screen._recorded is not None)
        yield pilot, screen


def test_replay_plays_whole_recording_with_same_transcript_and_stats(tmp_path):
    events = synthetic_session("gammatune+", seed=2)
    app = make_replay_app(_recording(tmp_path, events), speed=0)

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, ReplayChatScreen) and screen.read_only
            await _until(pilot, lambda: screen.stats.summary is not None)
            assert _text(events) in screen.transcript.plain_text()
            want, got = stats_of(events), screen.stats
            assert (got.tokens, got.steps, got.acceptance_rate, got.tokens_per_s) == \
                   (want.tokens, want.steps, want.acceptance_rate, want.tokens_per_s)
            info = str(screen.query_one("#replay-info").render())
            assert "synthetic-target" in info and "gammatune+" in info and "versions" in info

    asyncio.run(go())


def test_player_keys_pause_step_back_and_forward(tmp_path):
    events, steps, app = _paused_replay(tmp_path)

    async def go():
        async with _loaded(app) as (pilot, screen):
            assert screen.steps == []
            for _ in range(3):
                await pilot.press("full_stop")
            await _until(pilot, lambda: len(screen.steps) == 3)
            await pilot.press("comma")
            await _until(pilot, lambda: len(screen.steps) == 2)
            assert screen.transcript.plain_text().endswith(_text([steps[0], steps[1]]))
            assert screen.stats.steps == 2
            await pilot.press("full_stop")
            await _until(pilot, lambda: len(screen.steps) == 3)
            assert screen.steps[-1] == steps[2]
            await pilot.press("e")              # jump to end
            await _until(pilot, lambda: screen.stats.summary is not None)
            assert screen.steps == steps
            # stepping back after the end, then playing on, still gives the full session once
            await pilot.press("comma")
            await pilot.press("comma")
            await _until(pilot, lambda: len(screen.steps) == len(steps) - 2)
            await pilot.press("space")
            await _until(pilot, lambda: len(screen.steps) == len(steps) and not screen.generating)
            assert screen.steps == steps
            assert screen.transcript.plain_text().count(_text(events)) == 1

    asyncio.run(go())


def test_speed_keys_change_player_speed(tmp_path):
    app = make_replay_app(_recording(tmp_path, synthetic_session("specdecode")), speed=1, paused=True)

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.1)
            await pilot.press("plus")
            assert app.main_screen.source.speed == 2
            await pilot.press("minus", "minus")
            assert app.main_screen.source.speed == 0.5

    asyncio.run(go())


def test_hostile_recording_text_is_shown_literally(tmp_path):
    events = synthetic_session("specdecode", text="ok " + HOSTILE + "\n", prompt="p [red]x[/red]\x1b[2J")
    app = make_replay_app(_recording(tmp_path, events), speed=0)

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            await _until(pilot, lambda: screen.stats.summary is not None)
            text = screen.transcript.plain_text()
            assert "\x1b" not in text and "\r" not in text and "\x07" not in text
            assert "\\x1b[31mRED" in text and "[bold]markup[/bold]" in text and "[red]x[/red]" in text

    asyncio.run(go())


def test_multi_session_chat_recording_plays_every_turn(tmp_path):
    import dataclasses

    one = synthetic_session("gammatune", max_new_tokens=20)
    two = synthetic_session("gammatune", max_new_tokens=30, prompt="second question")
    two[0] = dataclasses.replace(two[0], turn=1, user_text="second question")
    app = make_replay_app(_recording(tmp_path, one, two), speed=0)

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            await _until(pilot, lambda: len(screen.sessions) == 2 and screen.stats.summary is not None)
            assert "second question" in screen.transcript.plain_text()
            assert len(screen.steps) == sum(1 for e in one + two if isinstance(e, StepEvent))

    asyncio.run(go())


def test_escape_stops_the_replay_and_space_plays_on(tmp_path):
    events, steps, app = _paused_replay(tmp_path)

    async def go():
        async with _loaded(app) as (pilot, screen):
            await pilot.press("full_stop", "full_stop")
            await _until(pilot, lambda: len(screen.steps) == 2)
            await pilot.press("escape")
            await _until(pilot, lambda: not screen.generating)
            assert len(screen.steps) == 2 and screen.stats.summary is None
            await pilot.press("space")   # resume: the rest of the session, once
            await _until(pilot, lambda: screen.stats.summary is not None and not screen.generating)
            assert screen.steps == steps

    asyncio.run(go())


def test_copy_keys_work_on_the_replay_screen(tmp_path):
    """Ctrl+Y / Ctrl+T copy a recording's answers as chat does (the same plain-text renderer), at 80×24 and 160×48."""
    from gammatune_tui.render.plain_text import answer_text, conversation_text

    first = synthetic_session("gammatune+", seed=2, text="one [two] </s>")
    second = synthetic_session("specdecode", seed=3, text="three four </s>")
    recording = _recording(tmp_path, first, second)

    def parts(events):
        steps = [e for e in events if isinstance(e, StepEvent)]
        return events[0], steps, events[-1]

    async def go(size):
        app = make_replay_app(recording, speed=0)
        async with app.run_test(size=size) as pilot:
            screen = app.screen
            await _until(pilot, lambda: len(screen.sessions) == 2 and screen.stats.summary is not None
                         and not screen.generating)
            await pilot.press("ctrl+y")
            assert app.clipboard == answer_text(*parts(second)[1:]) == "three four "
            await pilot.press("ctrl+t")
            assert app.clipboard == conversation_text([parts(first), parts(second)])
            assert "one [two] " in app.clipboard and "</s>" not in app.clipboard
            titles = [c.title for c in screen.system_commands()]
            assert "Copy last answer" in titles and "Copy whole transcript" in titles

    for size in ((80, 24), (160, 48)):
        asyncio.run(go(size))


def test_the_header_leaves_the_transcript_its_rows_at_80x24(tmp_path):
    """At 80×24 the header is the player line, the models and the settings (4 rows with the settings wrapped);
    the load times and versions move to the palette's "Recording details". A wide screen shows them all."""
    from gammatune_tui.engine.events import SessionHeader

    events = synthetic_session("gammatune+", seed=2)
    header = events[0]
    assert isinstance(header, SessionHeader) and header.versions
    recording = _recording(tmp_path, events)

    async def go(size):
        app = make_replay_app(recording, speed=0, paused=True)
        async with app.run_test(size=size) as pilot:
            screen = app.screen
            await _until(pilot, lambda: screen._recorded is not None)
            await pilot.pause(0.3)
            info = screen.query_one("#replay-info")
            text = str(info.render())
            rows = info.size.height
            assert screen.sub_title == "replaying…"   # not "generating…": a recording generates nothing
            screen.action_recording_details()
            await pilot.pause(0.1)
            notes = [n.message for n in app._notifications]
            return text, rows, notes

    text, rows, notes = asyncio.run(go((80, 24)))
    assert rows <= 4 and "versions" not in text and "synthetic-target" in text and "gammatune+" in text
    assert any("versions" in n and "synthetic-target" in n for n in notes)
    text, rows, _ = asyncio.run(go((160, 48)))
    assert "versions" in text and rows <= 5, (rows, text)
