"""At 80×24 a refused value's reason shows where the user looks, even under the last field of the controls.

On a laptop's 80×24 the panels (F8) are taller than the screen: the controls sit below the chart and the
statistics, so a field near the bottom is focused on the panel's last rows, and the reason under it (which
quotes what was typed, so it may take several lines) used to open below the fold: Enter on a bad value
seemed to do nothing.
"""

from __future__ import annotations

from textual.widgets import Input

from gammatune_tui.engine.policies import PolicySettings

from uihelpers import SyntheticSource, make_app, run, wait_until


def _on_screen(widget) -> bool:
    """The whole widget lies inside its scrolling ancestors' visible parts and inside the screen."""
    region = widget.region
    if not region.area:
        return False
    for node in widget.ancestors:
        if node is widget.screen:
            break
        if getattr(node, "is_scrollable", False) and not node.region.contains_region(region):
            return False
    return widget.screen.region.contains_region(region)


def test_a_refused_value_under_the_last_field_is_shown_whole_at_80x24():
    async def scenario():
        app = make_app(SyntheticSource(PolicySettings.build("costaware", 4), steps=2), prompt="x")
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="summary")
            await pilot.press("f8")
            await pilot.pause()
            side = chat.query_one("#side")
            for name, typed, reason in (("temperature", "warm" * 15, "T must be a number ≥ 0, got"),
                                        ("gamma_max", "x", "γ max must be a number, got 'x'")):
                side.scroll_home(animate=False)
                await pilot.pause()
                field = chat.query_one(f"#ctl-{name}", Input)
                field.focus()                  # as Tab reaches it: scrolled into view, near the panel's bottom
                await pilot.pause()
                field.value = ""
                await pilot.press(*typed, "enter")
                await pilot.pause()
                await pilot.pause()
                assert chat.controls.error_for(name).startswith(reason)
                err = chat.query_one(f"#err-{name}")
                assert err.region.height >= 1
                assert _on_screen(field) and _on_screen(err), (name, field.region, err.region, side.region)

    run(scenario())


def test_a_bound_moved_past_the_gamma0_on_screen_is_refused_as_the_cli_refuses_it():
    """`run --gamma 4 --gamma-max 3` is refused; in the controls γ max 3 under γ0 4 was taken."""
    async def scenario():
        src = SyntheticSource(PolicySettings.build("costaware", 4), steps=2)
        app = make_app(src, prompt="x")
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="summary")
            await pilot.press("f8")
            for name, typed, reason in (("gamma_max", "3", "γ max 3 is below γ0 4: lower γ0 first, or raise γ max"),
                                        ("gamma_min", "5", "γ min 5 is above γ0 4: raise γ0 first, or lower γ min")):
                field = chat.query_one(f"#ctl-{name}", Input)
                field.focus()
                field.value = ""
                await pilot.press(*typed, "enter")
                await pilot.pause()
                assert chat.controls.error_for(name) == reason
            p = chat.controls.settings.params
            assert (chat.controls.settings.gamma0, p.gamma_min, p.gamma_max) == (4, 1, 8)   # as it was
            assert src.requests == []

    run(scenario())
