"""The end of the transcript stays in view whatever panels are open (issue 40 row 8).

After two long turns and a short one ("Say only: yes."), F7 showing the step
inspector again left the transcript scrolled up at an earlier heading: a
transcript made shorter keeps its scroll offset, so its last lines, the short
answer among them, sat below the fold until F7 hid the inspector. At 80×24
F7's whole table did the same.
"""

from __future__ import annotations

from textual.widgets import Input

from uihelpers import SyntheticSource, make_app, run, wait_until

LONG = ("The cat sat on the mat. " * 6 + "\n") * 10


def _last_line_shown(chat) -> bool:
    """Whether the transcript's last line is on screen (within the rows the transcript shows)."""
    ts = chat.transcript
    last = ts.line_count - 1
    return ts.display and ts.scroll_offset.y <= last < ts.scroll_offset.y + ts.scrollable_content_region.height


async def _turn(pilot, chat, prompt: str, n: int) -> None:
    chat.query_one("#prompt", Input).value = prompt
    await pilot.press("enter")
    await wait_until(pilot, lambda: len(chat.sessions) == n and chat.stats.summary is not None and not chat.generating,
                     what=f"turn {n}")
    await pilot.pause(0.1)


def test_the_end_stays_in_view_through_long_turns_and_f7_f8_at_160x45_and_80x24():
    async def scenario(size):
        src = SyntheticSource(text=LONG)
        app = make_app(src)
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await _turn(pilot, chat, "Repeat exactly: the cat sat on the mat.", 1)
            await _turn(pilot, chat, "Again, twice as long.", 2)
            src.text = "yes."
            await _turn(pilot, chat, "Say only: yes.", 3)
            assert chat.transcript.plain_text().endswith("yes.")
            assert _last_line_shown(chat), size
            for key in ("f7", "f7", "f7", "f7"):   # hidden, shown (80×24: whole table, hidden, step line …)
                await pilot.press(key)
                await pilot.pause(0.2)
                assert _last_line_shown(chat), (size, key, chat.inspector.display)
            await pilot.press("f8")   # 80×24: the panels take the screen; wider: the focus goes to the controls
            await pilot.pause(0.2)
            await pilot.press("f8")
            await pilot.pause(0.2)
            assert _last_line_shown(chat), (size, "f8 twice")

    for size in ((160, 45), (80, 24)):
        run(scenario(size))


def test_a_user_who_scrolled_up_keeps_their_place_when_f7_changes_the_height():
    async def scenario():
        src = SyntheticSource(text=LONG)
        app = make_app(src)
        async with app.run_test(size=(160, 45)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await _turn(pilot, chat, "Tell me a long story.", 1)
            await _turn(pilot, chat, "Another one.", 2)
            chat.transcript.scroll_to(y=3, animate=False)
            await pilot.pause(0.1)
            for _ in range(2):
                await pilot.press("f7")
                await pilot.pause(0.2)
                assert chat.transcript.scroll_offset.y == 3   # reading an earlier turn: not pulled to the end

    run(scenario())
