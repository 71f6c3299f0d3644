"""Pilot test: a burst of keys typed after the chat has opened (a paste-speed typist, a terminal that sends a chunk).

The app handles `?` as a priority key before the keys ahead of it have
reached the prompt, so deciding "the prompt is empty" there opened the help
in the middle of "Is this a question? yes" and lost " yes" (issue 17 row 23,
seen again in tmux at 160×48 once the screen had mounted).
"""

from __future__ import annotations

import asyncio

from textual import events
from textual.widgets import Input

from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import SyntheticSource, make_app, run, wait_until

KEY_NAMES = {"?": "question_mark", " ": "space"}


def test_a_burst_of_keys_after_the_chat_opened_lands_whole_in_the_prompt(monkeypatch):
    """The prompt lags behind the app (a loaded machine): `?` must be judged in the prompt's own key order."""
    typed = Input._on_key

    async def lagging(self, event):
        await asyncio.sleep(0.02)
        await typed(self, event)

    monkeypatch.setattr(Input, "_on_key", lagging)
    text = "Is this a question? yes"

    async def scenario(size):
        app = make_app(SyntheticSource(steps=5))
        async with app.run_test(size=size) as pilot:
            prompt = app.main_screen.query_one("#prompt")
            await wait_until(pilot, lambda: app.focused is prompt, what="the prompt's focus")
            await pilot.pause(0.1)
            for ch in text:   # all queued at once, as a terminal delivers one chunk
                app.post_message(events.Key(KEY_NAMES.get(ch, ch), ch))
            await wait_until(pilot, lambda: prompt.value == text or isinstance(app.screen, HelpScreen),
                             what="the typed text")
            await pilot.pause(0.1)
            assert not isinstance(app.screen, HelpScreen)
            assert prompt.value == text
            # a `?` alone in the empty prompt still opens the help, also in a burst
            prompt.value = ""
            for ch in "?":
                app.post_message(events.Key(KEY_NAMES.get(ch, ch), ch))
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
            assert prompt.value == ""

    for size in ((80, 24), (160, 48)):
        run(scenario(size))
