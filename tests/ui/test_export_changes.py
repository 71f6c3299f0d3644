"""Settings changed mid-answer: the transcript marks the step, and the HTML export shows it too."""

from __future__ import annotations

import html
import re

from textual.widgets import Input, Select

from gammatune_tui.engine.policies import DEFAULT_ETA, PolicySettings

from uihelpers import gated_chat, run, wait_until


def _page_text(path) -> str:
    """The export's text as a reader sees it (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def test_html_export_shows_where_the_method_and_a_parameter_changed():
    async def scenario():
        async with gated_chat(3, settings=PolicySettings.build("gammatune+", 4)) as (src, pilot, chat):
            chat.query_one("#ctl-method", Select).value = "specdecode"
            await wait_until(pilot, lambda: len(src.requests) == 1, what="the method request")
            src.gate.release(3)
            await wait_until(pilot, lambda: len(chat.steps) == 6, what="6 steps")
            chat.query_one("#ctl-method", Select).value = "gammatune"
            await wait_until(pilot, lambda: len(src.requests) == 2, what="the second request")
            src.gate.release(2)
            await wait_until(pilot, lambda: len(chat.steps) == 8, what="8 steps")
            eta = chat.query_one("#ctl-eta", Input)
            eta.focus()
            eta.value = ""
            await pilot.press(*"0.3", "enter")
            await wait_until(pilot, lambda: len(src.requests) == 3, what="the η request")
            src.gate.release(2)
            await wait_until(pilot, lambda: len(chat.steps) == 10, what="10 steps")
            src.stop()
            await wait_until(pilot, lambda: not chat.generating, what="the end")
            assert [i for i, s in enumerate(chat.steps) if s.settings_changed] == [3, 6, 8]
            shown = chat.transcript.plain_text()
            marks = ["⟦step 4: gammatune+ → specdecode⟧", "⟦step 7: specdecode → gammatune⟧",
                     f"⟦step 9: η {float(DEFAULT_ETA):g} → 0.3⟧"]
            for mark in marks:
                assert mark in shown
            # each mark sits right before the first token of its step
            assert shown.index(marks[0]) < shown.index(marks[1]) < shown.index(marks[2])
            page = _page_text(chat.action_export_html())
            for mark in marks:
                assert mark in page
            assert ("changed at step 4: gammatune+ → specdecode · step 7: specdecode → gammatune · "
                    f"step 9: η {float(DEFAULT_ETA):g} → 0.3") in page.replace("\n", " ").replace("  ", " ")

    run(scenario())


def test_gamma0_and_temperature_changes_are_named_and_counted_as_in_the_transcript():
    """The controls' note and the transcript's mark give one step number (from 1) and name what changed."""
    async def scenario():
        async with gated_chat(6, settings=PolicySettings.build("gammatune", 4)) as (src, pilot, chat):
            g0 = chat.query_one("#ctl-gamma0", Input)
            g0.focus()
            g0.value = ""
            await pilot.press(*"6", "enter")
            await wait_until(pilot, lambda: len(src.requests) == 1, what="the γ0 request")
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 7, what="7 steps")
            assert "⟦step 7: γ0 4 → 6⟧" in chat.transcript.plain_text()
            status = str(chat.query_one("#ctl-status").render())
            assert status == "applied at step 7: γ0 4 → 6"
            t = chat.query_one("#ctl-temperature", Input)
            t.focus()
            t.value = ""
            await pilot.press(*"0.5", "enter")
            await wait_until(pilot, lambda: len(src.requests) == 2, what="the T request")
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 8, what="8 steps")
            assert "⟦step 8: T 0 → 0.5⟧" in chat.transcript.plain_text()
            assert str(chat.query_one("#ctl-status").render()) == "applied at step 8: T 0 → 0.5"
            src.stop()
            await wait_until(pilot, lambda: not chat.generating, what="the end")

    run(scenario())
