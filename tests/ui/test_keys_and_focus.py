"""Pilot tests: where typed keys go (text typed while the app opens, Tab order) and the copy keys."""

from __future__ import annotations

from textual import events

from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import SyntheticSource, make_app, run, wait_until

KEY_NAMES = {"?": "question_mark", " ": "space"}


def test_text_typed_while_chat_opens_lands_whole_in_the_prompt():
    """Keys that arrive before the screen has mounted (as a fast typist's do) go to the prompt; `?` opens no help."""
    text = "Is this a question? yes"

    async def scenario(size):
        app = make_app(SyntheticSource(steps=5))
        for ch in text:   # queued before the app runs: handled before the prompt has the focus
            app.post_message(events.Key(KEY_NAMES.get(ch, ch), ch))
        async with app.run_test(size=size) as pilot:
            prompt = app.main_screen.query_one("#prompt")
            await wait_until(pilot, lambda: prompt.value == text or isinstance(app.screen, HelpScreen),
                             what="the typed text")
            assert not isinstance(app.screen, HelpScreen)
            assert prompt.value == text and app.focused is prompt
            # from now on `?` in the empty prompt is the help key again
            prompt.value = ""
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)

    for size in ((120, 40), (80, 24), (160, 48)):
        run(scenario(size))
