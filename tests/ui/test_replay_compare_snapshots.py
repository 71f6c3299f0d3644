"""Snapshots of a replay in the chat screen and of the compare screen after a race (fixed recordings).

Update after an intended visual change with
`pytest tests/ui/test_replay_compare_snapshots.py --snapshot-update` and look at the report first.
"""

from __future__ import annotations

from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.session.compare import MethodRun
from gammatune_tui.session.recording import Recording, RecordedSession
from gammatune_tui.session.synthetic import synthetic_session
from gammatune_tui.ui.app import make_replay_app
from gammatune_tui.ui.app import make_compare_replay_app

from uihelpers import wait_until

SIZE = (150, 46)
# the recording the picture replays holds the paper's five methods, named here so that a new method in
# METHODS does not change the picture (test_compare_screen.py drives the screen with all of them)
FIVE_METHODS = ("specdecode", "hf-heuristic", "assistant-threshold", "gammatune", "gammatune+")


def _pinned(method: str):
    """Every policy parameter spelled out, so retuned defaults do not change the pictures."""
    return PolicySettings.build(method, 4, eta=0.5, delta=1, tau=0.4, gamma_min=1, gamma_max=16)


async def _wait(pilot, pred, timeout=30.0):
    await wait_until(pilot, pred, timeout, what="condition")


async def _settle(pilot, screen):
    """Throttled views (stats, inspector, chart) and the player line drawn in their final state."""
    await pilot.pause(0.3)
    screen.views.flush()
    screen._update_info()
    await pilot.pause(0.6)


def _recording(events) -> Recording:
    from pathlib import Path

    return Recording(Path("gammatune-plus.jsonl"), [RecordedSession(events[0], events[1:-1], events[-1])])


def test_replay_screen(snap_compare):
    app = make_replay_app(_recording(synthetic_session(_pinned("gammatune+"), seed=5)), speed=0)

    async def before(pilot):
        screen = pilot.app.screen
        await _wait(pilot, lambda: screen.stats.summary is not None and not screen.generating)
        await _settle(pilot, screen)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_replay_paused_after_stepping(snap_compare):
    app = make_replay_app(_recording(synthetic_session(_pinned("gammatune"), seed=5)), speed=0, paused=True)

    async def before(pilot):
        screen = pilot.app.screen
        await _wait(pilot, lambda: screen._recorded is not None)
        await pilot.press(*["full_stop"] * 6, "comma")
        await _wait(pilot, lambda: len(screen.steps) == 5)
        await _settle(pilot, screen)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_compare_screen_after_the_race(snap_compare):
    runs = [MethodRun.from_events(synthetic_session(m, seed=5)) for m in FIVE_METHODS]
    app = make_compare_replay_app(runs, speed=0, title="replay: five-methods.jsonl")

    async def before(pilot):
        screen = pilot.app.screen
        await _wait(pilot, lambda: screen.summary is not None and not screen.race.racing)
        await pilot.pause(0.3)
        for pane in screen.panes:   # charts redraw at most every 0.2 s: force the final frame
            pane.chart._dirty = True
            pane.chart.refresh()
        await pilot.pause(0.6)

    assert snap_compare(app, terminal_size=(170, 50), run_before=before)
