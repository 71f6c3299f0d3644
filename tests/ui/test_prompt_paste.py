"""A paste of several lines into the chat's prompt is sent whole (Textual's Input kept the first line only)."""

from __future__ import annotations

import time

from textual import events

from gammatune_tui.ui.widgets.prompt import expand_pastes, paste_marker

from uihelpers import SyntheticSource, make_app, run, wait_until

FUNCTION = "def area(w, h):\n    \"\"\"Area of a rectangle.\"\"\"\n    return w * h"


class Recording(SyntheticSource):
    """Keeps every prompt it was sent."""

    def events(self, prompt=None):
        self.sent = [*getattr(self, "sent", []), prompt]
        return super().events(prompt)


def _app(src):
    app = make_app(src)
    notices = []
    app.notify = lambda message, **kw: notices.append((message, kw))   # type: ignore[method-assign]
    return app, notices


def test_a_three_line_paste_is_sent_whole_with_what_was_typed_around_it():
    async def scenario(size):
        src = Recording(steps=2)
        app, notices = _app(src)
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt")
            await pilot.press(*"Finish this: ")
            prompt.post_message(events.Paste(FUNCTION.replace("\n", "\r\n")))   # a terminal's line ends
            await wait_until(pilot, lambda: "[paste 1" in prompt.value, what="the paste's marker")
            assert prompt.value == "Finish this: [paste 1: 3 lines, 63 chars]"
            await pilot.press(*" thanks", "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="the answer")
            assert src.sent == [f"Finish this: {FUNCTION} thanks"]
            assert prompt.value == "" and prompt.pastes == []
            assert FUNCTION in chat.transcript.plain_text()   # the transcript shows the whole prompt
            assert not notices, notices

    for size in ((80, 24), (160, 48)):
        run(scenario(size))


def test_a_paste_whose_marker_was_edited_away_is_not_sent_silently():
    async def scenario():
        src = Recording(steps=2)
        app, notices = _app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt")
            prompt.post_message(events.Paste("a\nb"))
            await wait_until(pilot, lambda: prompt.value.startswith("[paste 1"), what="the marker")
            await pilot.press("backspace", *"then")   # the marker's last character is gone
            await pilot.press("enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="the answer")
            assert src.sent == ["[paste 1: 2 lines, 3 charsthen"]
            assert any("Paste 1 (2 lines) was not sent" in m for m, _ in notices), notices

    run(scenario())


def test_a_twenty_thousand_line_paste_keeps_the_box_responsive():
    """The box holds one short marker, whatever the paste's size; the text goes whole on Enter."""
    big = "\n".join(f"x = {i}" for i in range(20_000))

    async def scenario():
        src = Recording(steps=2)
        app, notices = _app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt")
            prompt.post_message(events.Paste(big))
            await wait_until(pilot, lambda: prompt.value.startswith("[paste 1"), what="the marker")
            assert prompt.value == paste_marker(1, big) == "[paste 1: 20,000 lines, 188,889 chars]"
            await pilot.press(*" go", "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, timeout=60, what="the answer")
            assert src.sent == [big + " go"]
            # the app still answers keys at once after drawing it (the transcript appends a 20,000-line prompt)
            await pilot.press(*"y")
            await wait_until(pilot, lambda: prompt.value == "y", what="a key typed after the big paste")

    run(scenario())


def test_one_line_pastes_are_typed_in_and_markers_expand_in_one_pass():
    assert expand_pastes("[paste 1: 2 lines, 3 chars]", ["a\nb"]) == ("a\nb", [])
    # a paste whose own text reads like a marker is sent as it is
    tricky = "[paste 2: 2 lines, 3 chars]\nz"
    ab = "a\nb"
    text, notes = expand_pastes(f"{paste_marker(1, tricky)} {paste_marker(2, ab)}", [tricky, ab])
    assert text == f"{tricky} a\nb" and notes == []

    async def scenario():
        src = Recording(steps=2)
        app, _ = _app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            prompt = app.main_screen.query_one("#prompt")
            prompt.post_message(events.Paste("one line\n"))
            await wait_until(pilot, lambda: prompt.value == "one line", what="the one-line paste")
            assert prompt.pastes == []

    run(scenario())


def test_a_paste_refused_before_its_turn_begins_goes_back_into_the_box():
    """A paste too long for the model's context is refused with one line; the user does not have to paste it again."""
    from gammatune_tui.errors import InvalidParameter

    class TooLong(Recording):
        def events(self, prompt=None):
            self.sent = [*getattr(self, "sent", []), prompt]
            if prompt and prompt.count("\n") > 5:
                raise InvalidParameter("your message is 130,897 tokens, and the model's context holds 1,024")
            return super().events(prompt)

    big = "\n".join(f"x = {i}" for i in range(200))

    async def scenario():
        src = TooLong(steps=2)
        app, notices = _app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt")
            await wait_until(pilot, lambda: chat.ready, what="ready")
            prompt.post_message(events.Paste(big))
            await wait_until(pilot, lambda: prompt.value.startswith("[paste 1"), what="the marker")
            await pilot.press("enter")
            await wait_until(pilot, lambda: any("back in the box" in m for m, _ in notices), what="the refusal")
            assert prompt.value == paste_marker(1, big)
            await pilot.press("enter")   # sent again as it was
            await wait_until(pilot, lambda: len(src.sent) == 2, what="the second try")
            assert src.sent == [big, big]

    run(scenario())
