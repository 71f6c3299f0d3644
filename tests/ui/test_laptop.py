"""The app at a laptop's size and from where the user is: 80×24 layout, the footer, focus, `?` and Ctrl+←/→.

Issue 11, items 1, 4 and 5: every panel reachable at 80×24, no footer key cut
in half, a visible first Tab stop, and keys that work while the prompt has
the focus (which it has most of the time).
"""

from __future__ import annotations

from textual.widgets import Input
from gammatune_tui.ui.textual_compat import FooterKey

from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import SyntheticSource, make_app, run, wait_until


async def _finished(pilot, chat):
    await wait_until(pilot, lambda: chat.stats.summary is not None and not chat.generating, what="summary")
    await pilot.pause(0.3)


def _on_screen(widget, size) -> bool:
    """Whether the widget is displayed with a non-empty region inside the screen."""
    r = widget.region
    return widget.display and r.width > 0 and r.height > 0 and r.right <= size[0] and r.bottom <= size[1]


def _footer_keys(screen):
    return list(screen.query(FooterKey))


def test_at_80x24_transcript_and_panels_take_turns_and_every_panel_is_reachable():
    size = (80, 24)

    async def scenario():
        app = make_app(SyntheticSource(steps=30), prompt="x")
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await _finished(pilot, chat)
            assert chat.has_class("-narrow")
            side = chat.query_one("#side")
            assert not side.display and _on_screen(chat.transcript, size) and _on_screen(chat.inspector, size)
            prompt = chat.query_one("#prompt", Input)
            assert app.focused is prompt
            await pilot.press("f8")                                  # from the prompt: to the panels
            await pilot.pause(0.2)
            assert chat.columns.panels and side.display and not chat.query_one("#left").display
            assert side.region.width == size[0]
            assert app.focused is chat.query_one("#ctl-method")
            for wid in ("#chart", "#stats", "#ctl-method"):
                w = chat.query_one(wid)
                side.scroll_to_widget(w, animate=False)
                await pilot.pause()
                assert _on_screen(w, size), wid
            for name in ("gamma0", "eta", "delta", "tau", "gamma_min", "gamma_max", "temperature"):
                # every control of gammatune+ a Tab away, and scrolled into view
                await pilot.press("tab")
                await pilot.pause()
                assert app.focused is chat.query_one(f"#ctl-{name}") and _on_screen(app.focused, size)
            await pilot.press("f8")                                  # and back to the prompt
            await pilot.pause(0.2)
            assert not chat.columns.panels and not side.display and app.focused is prompt

    run(scenario())


async def _check_footer(pilot, screen, width):
    """No key hidden under the palette key or past the edge; the essential ones always there."""
    def settled():
        keys = _footer_keys(screen)
        return any("-command-palette" in k.classes for k in keys) and all(k.region.width for k in keys)

    await wait_until(pilot, settled, what="the footer composed")   # it recomposes when bindings or width change
    keys = [k for k in _footer_keys(screen) if "-command-palette" not in k.classes]
    palette = next(k for k in _footer_keys(screen) if "-command-palette" in k.classes)
    for k in keys:
        assert k.region.width > 0 and k.region.right <= palette.region.x <= width, (width, k.key, k.region)
    return {k.key for k in keys}


def test_the_footer_never_cuts_a_key():
    async def scenario():
        for size in ((80, 24), (90, 24), (100, 30), (112, 30), (120, 36), (140, 44)):
            app = make_app(SyntheticSource(steps=3), prompt="x")
            async with app.run_test(size=size) as pilot:
                chat = app.main_screen
                await _finished(pilot, chat)
                await pilot.pause(0.2)
                shown = await _check_footer(pilot, chat, size[0])
                assert {"escape", "f1", "f7", "f8", "f9"} <= shown, (size, shown)
                if size[0] >= 120:                                   # room for every key
                    assert {"f2", "f3", "f4", "f5", "f6"} <= shown, (size, shown)

    run(scenario())


def test_the_narrow_footer_follows_a_resize():
    async def scenario():
        app = make_app(SyntheticSource(steps=3), prompt="x")
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            await _finished(pilot, chat)
            assert "f3" in await _check_footer(pilot, chat, 120)
            await pilot.resize_terminal(80, 24)
            await pilot.pause(0.3)
            assert chat.has_class("-narrow") and "f3" not in await _check_footer(pilot, chat, 80)
            await pilot.resize_terminal(120, 36)
            await pilot.pause(0.3)
            assert chat.has_class("-wide") and chat.query_one("#side").display
            assert "f3" in await _check_footer(pilot, chat, 120)

    run(scenario())


def test_first_tab_from_the_prompt_lands_on_a_visible_control_with_a_visible_focus():
    async def scenario():
        app = make_app(SyntheticSource(steps=3), prompt="x")
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            await _finished(pilot, chat)
            assert app.focused is chat.query_one("#prompt")
            await pilot.press("tab")
            await pilot.pause()
            method = chat.query_one("#ctl-method")
            assert app.focused is method and _on_screen(method, (120, 36))
            await pilot.press("tab")
            await pilot.pause()
            gamma0 = chat.query_one("#ctl-gamma0", Input)
            eta = chat.query_one("#ctl-eta", Input)
            assert app.focused is gamma0
            assert gamma0.styles.background != eta.styles.background        # the focused field stands out
            label = chat.query_one("#row-gamma0 .ctl-label")
            other = chat.query_one("#row-eta .ctl-label")
            assert label.styles.color != other.styles.color                 # and so does its label
            await pilot.press("shift+tab", "shift+tab")
            await pilot.pause()
            assert app.focused is chat.query_one("#prompt")

    run(scenario())


def test_question_mark_opens_help_from_the_empty_prompt_and_is_typed_into_text():
    async def scenario():
        app = make_app(SyntheticSource(steps=3))
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt", Input)
            assert app.focused is prompt and prompt.value == ""
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("question_mark")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)
            await pilot.press(*"why", "question_mark")
            await pilot.pause()
            assert prompt.value == "why?" and not isinstance(app.screen, HelpScreen)

    run(scenario())


def test_ctrl_arrows_step_the_inspector_from_the_empty_prompt_and_move_by_word_in_text():
    async def scenario():
        app = make_app(SyntheticSource(steps=12), prompt="x")
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            await _finished(pilot, chat)
            prompt = chat.query_one("#prompt", Input)
            assert app.focused is prompt
            await pilot.press("ctrl+left", "ctrl+left")
            await pilot.pause()
            assert chat.transcript.selected_step == 10 and chat.inspector.event is chat.steps[10]
            await pilot.press("ctrl+right")
            await pilot.pause()
            assert chat.inspector.event is chat.steps[11]
            await pilot.press(*"two words")
            await pilot.press("ctrl+left")
            await pilot.pause()
            assert prompt.cursor_position == len("two ") and chat.inspector.event is chat.steps[11]

    run(scenario())
