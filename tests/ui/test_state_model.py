"""The chat's state model: the screen's reactive state draws the subtitle, the inspector owns which step it shows."""

from __future__ import annotations

from uihelpers import gated_chat, run, wait_until


def test_the_subtitle_follows_generating_and_the_views_catch_up_when_the_turn_ends():
    async def go():
        async with gated_chat(3) as (src, pilot, chat):
            assert chat.generating and chat.sub_title == "generating…"
            src.gate.release(100)
            await wait_until(pilot, lambda: not chat.generating, what="the turn's end")
            await pilot.pause()
            # how the answer ended, in words; the stats and the inspector drawn up to the last step
            assert chat.sub_title.endswith(f"· {chat.stats.summary.tokens} tokens · reached the token limit")
            assert chat.stats is chat.session_log.current and len(chat.steps) == 50
            assert chat.inspector.event is chat.steps[-1]
            assert chat.stats_panel.stats is chat.stats

    run(go())


def test_a_picked_step_holds_the_inspector_while_steps_arrive_and_esc_follows_again():
    async def go():
        async with gated_chat(3) as (src, pilot, chat):
            chat.select_step(0)
            assert not chat.inspector.follow and chat.inspector.event is chat.steps[0]
            src.gate.release(3)
            await wait_until(pilot, lambda: len(chat.steps) == 6, what="3 more steps")
            await pilot.pause(0.3)   # past the inspector's redraw interval
            assert chat.inspector.event is chat.steps[0]
            chat.select_step(None)   # what Esc does between turns, and the palette's "Inspect latest step"
            assert chat.inspector.follow and chat.inspector.event is chat.steps[-1]
            assert chat.inspector.index == 5 and chat.inspector.total == 6   # "step 6/6"
            src.gate.release(100)
            await wait_until(pilot, lambda: not chat.generating, what="the turn's end")

    run(go())
