"""At 80×24 a notice (the 8-second "Loaded" one) covered the command palette's search field: it waits behind it."""

from __future__ import annotations

from textual.command import CommandPalette
from gammatune_tui.ui.textual_compat import ToastRack

from uihelpers import SyntheticSource, make_app, run, wait_until


def _shown(rack: ToastRack) -> int:
    """Cells of the screen the rack's notices cover."""
    if not rack.display:
        return 0
    return sum(t.region.area for t in rack.query("Toast") if t.styles.visibility != "hidden")


def test_notices_do_not_cover_the_open_palette_and_come_back_when_it_closes():
    async def scenario():
        app = make_app(SyntheticSource(steps=2))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            app.notify("a notice long enough to reach the palette's search field", timeout=30)
            rack = chat.get_child_by_type(ToastRack)
            await wait_until(pilot, lambda: _shown(rack) > 0, what="the notice shown")   # slow on a loaded machine
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
            await pilot.pause(0.3)
            assert _shown(rack) == 0   # nothing drawn over the palette: neither the screen's notices
            app.notify("a notice while the palette is open", timeout=30)
            await pilot.pause(0.3)
            assert _shown(app.screen.get_child_by_type(ToastRack)) == 0   # nor its own
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is chat, what="the palette closed")
            await wait_until(pilot, lambda: _shown(rack) > 0, what="the notice back")   # its time not run out

    run(scenario())
