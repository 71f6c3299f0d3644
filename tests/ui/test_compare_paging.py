"""The compare screen with every method: each one reachable at 80×24, full names from 100 columns, its own F1."""

from __future__ import annotations

from textual.widgets import Label

from gammatune_tui.engine.policies import METHODS
from gammatune_tui.session.compare import MethodRun
from gammatune_tui.session.synthetic import synthetic_session
from gammatune_tui.ui.app import make_compare_replay_app
from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import plain, run, wait_until


def _app():
    runs = [MethodRun.from_events(synthetic_session(m, seed=5)) for m in METHODS]
    return make_compare_replay_app(runs, speed=0)


def _title_fits(pane) -> bool:
    """The pane's title shows its method's whole name (not cut with an ellipsis)."""
    title = pane.query_one(".pane-title", Label)
    text = plain(title, width=title.content_region.width or 1)
    return pane.label in text.replace("\n", " ") and "…" not in text


async def _race_over(pilot, screen):
    await wait_until(pilot, lambda: screen.summary is not None and not screen.race.racing, what="the race's end")
    await pilot.pause(0.2)


def test_every_method_is_reachable_at_80x24_with_its_full_name():
    async def scenario():
        app = _app()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.screen
            await _race_over(pilot, screen)
            seen: list[str] = []
            for _ in range(len(METHODS)):
                shown = [p for p in screen.panes if p.display]
                assert shown and all(p.region.width >= 30 and p.region.right <= 80 for p in shown)
                assert all(_title_fits(p) for p in shown), [p.label for p in shown]
                pages = plain(screen.query_one("#pages"), width=80)
                assert all(p.label in pages for p in shown)          # the line above names them
                seen += [p.label for p in shown if p.label not in seen]
                await pilot.press("right")
                await pilot.pause()
            assert seen == list(METHODS)
            await pilot.press(str(len(METHODS)))                       # a number key brings one into view
            await pilot.pause()
            assert screen.panes[-1].display
            await pilot.press("1")
            await pilot.pause()
            assert screen.panes[0].display and not screen.panes[-1].display
            # the ranking: its own view on a short screen, every method in it
            await pilot.press("s")
            await pilot.pause()
            summary = screen.query_one("#summary")
            assert summary.region.height >= len(METHODS) + 3 and not screen.query_one("#panes").display
            text = plain(summary, width=80)
            assert all(m in text for m in METHODS)
            await pilot.press("s")
            await pilot.pause()
            assert screen.query_one("#panes").display

    run(scenario())


def test_full_method_names_at_100_columns_and_more_panes_when_wide():
    async def scenario(size, per_page):
        app = _app()
        async with app.run_test(size=size) as pilot:
            screen = app.screen
            await _race_over(pilot, screen)
            shown = [p for p in screen.panes if p.display]
            assert len(shown) == per_page
            for first in range(0, len(METHODS), per_page):
                await pilot.press(str(first + 1))
                await pilot.pause()
                assert all(_title_fits(p) for p in screen.panes if p.display)
            if size[1] >= 34:   # tall: the ranking stays under the panes
                assert screen.query_one("#summary").display and screen.query_one("#panes").display

    for size, per_page in (((100, 30), 2), ((160, 48), 4), ((240, 60), 7)):
        run(scenario(size, per_page))


def test_f1_lists_the_compare_and_replay_screens_own_keys(tmp_path):
    from gammatune_tui.session.recording import RecordingWriter, read_recording
    from gammatune_tui.ui.app import make_replay_app

    async def help_text(app, size=(120, 40)) -> str:
        async with app.run_test(size=size) as pilot:
            await pilot.pause(0.2)
            await pilot.press("f1")
            await pilot.pause(0.2)
            assert isinstance(app.screen, HelpScreen)
            return plain(app.screen.query_one("#help-text"), width=110)

    text = run(help_text(_app()))
    assert "gammatune compare: keys" in text and "race again" in text and "← / →" in text and "1 … 9" in text
    assert "send the prompt" not in text and "F9" not in text
    assert "copy the answer of the method in view" in text and "copy the last answer" not in text

    path = tmp_path / "rec.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(synthetic_session("gammatune", seed=1))
    text = run(help_text(make_replay_app(read_recording(path), speed=0, paused=True)))
    assert "gammatune replay: keys" in text and "pause / play" in text and "one recorded step forward" in text
    assert "send the prompt" not in text and "F9" not in text

    from uihelpers import SyntheticSource, make_app

    text = run(help_text(make_app(SyntheticSource(steps=3))))
    assert "gammatune chat: keys" in text and "send the prompt" in text and "race again" not in text
