"""The chart's step axis runs on across turns while the inspector counts each turn's steps from 1: the axis says so."""

from __future__ import annotations

from uihelpers import SyntheticSource, make_app, plain, run, wait_until


def test_after_the_first_turn_the_axis_says_it_counts_across_turns_and_where_the_turn_began():
    async def scenario():
        app = make_app(SyntheticSource(steps=6), prompt="x")
        async with app.run_test(size=(140, 44)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="turn 1")
            await pilot.pause(0.6)
            assert chat.chart.axis_label() == "step"
            await pilot.press(*"again", "enter")
            await wait_until(pilot, lambda: len(chat.sessions) == 2 and not chat.generating, what="turn 2")
            await pilot.pause(0.6)
            assert "turn 2 · step 6/6" in plain(chat.inspector)
            label = "step, across turns (turn 2 from 7)"
            assert chat.chart.axis_label() == label
            chat.chart._dirty = True
            assert label in plain(chat.chart.render())

    run(scenario())
