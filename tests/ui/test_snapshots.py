"""Snapshots of the main screen, the step inspector and the help screen (fixed events, fixed size).

Update after an intended visual change with `pytest tests/ui/test_snapshots.py --snapshot-update`
and look at the report before committing.
"""

from __future__ import annotations

from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.ui.app import make_app
from gammatune_tui.session.synthetic import SyntheticSource

from uihelpers import wait_until

SIZE = (140, 44)


def _app(**kw):
    src = SyntheticSource(PolicySettings.build("gammatune+", 4), SamplingConfig(), steps=40, seed=3)
    return make_app(src, prompt="def parse(text):", **kw)


async def _finished(pilot):
    chat = pilot.app.main_screen
    await wait_until(pilot, lambda: chat.stats.summary is not None and not chat.generating)
    await pilot.pause(0.5)          # throttled views (chart, stats, inspector) have redrawn
    chat.query_one("#prompt").blur()


def test_main_screen(snap_compare):
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_finished)


def test_step_inspector_pinned_on_a_mismatch(snap_compare):
    async def before(pilot):
        await _finished(pilot)
        chat = pilot.app.main_screen
        k = next(i for i, s in enumerate(chat.steps)
                 if s.target_token and s.target_token.kind == "correction" and s.accepted < len(s.drafted) - 1)
        chat.select_step(k)
        await pilot.pause(0.3)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_help_screen(snap_compare):
    async def before(pilot):
        await _finished(pilot)
        await pilot.press("f1")
        await pilot.pause(0.3)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_main_screen_colour_blind_theme(snap_compare):
    assert snap_compare(_app(theme="okabe-ito"), terminal_size=SIZE, run_before=_finished)


# -- a laptop's terminal and a mid-size one (issue 11): every panel reachable, no key cut ----------------------
LAPTOP = (80, 24)
MID = (120, 36)


def test_laptop_80x24_transcript_view(snap_compare):
    assert snap_compare(_app(), terminal_size=LAPTOP, run_before=_finished)


def test_laptop_80x24_panels_view(snap_compare):
    async def before(pilot):
        await _finished(pilot)
        await pilot.press("f8")                 # chart, statistics and controls, full width
        await pilot.pause(0.5)

    assert snap_compare(_app(), terminal_size=LAPTOP, run_before=before)


def test_mid_size_120x36(snap_compare):
    assert snap_compare(_app(), terminal_size=MID, run_before=_finished)


def test_mid_size_120x36_refused_value(snap_compare):
    async def before(pilot):
        await _finished(pilot)
        chat = pilot.app.main_screen
        field = chat.query_one("#ctl-gamma_min")
        field.focus()
        field.value = ""
        await pilot.press(*"20", "enter")
        chat.query_one("#ctl-method").focus()       # the red stays when the field loses the focus
        await pilot.pause(0.3)
        chat.query_one("#side").scroll_to_widget(chat.query_one("#err-gamma_min"), animate=False)
        await pilot.pause(0.3)

    assert snap_compare(_app(), terminal_size=MID, run_before=before)
