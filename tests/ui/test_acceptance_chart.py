"""The acceptance chart: legend outside the plot, y ticks that fit the height (so none collide)."""

from __future__ import annotations

from textual.app import App

from gammatune_tui.ui.widgets.acceptance_chart import AcceptanceChart, alpha_ticks, count_ticks, tick_count

from uihelpers import plain, run


def test_tick_counts_fit_the_rows():
    assert [tick_count(r) for r in (0, 1, 2, 3, 4, 5, 7, 9)] == [1, 1, 2, 2, 3, 3, 5, 6]
    assert count_ticks(6, 4) == [0, 2, 4, 6]
    assert count_ticks(16, 4) == [0, 6, 12, 18]          # the last tick may pass the top: even spacing
    assert count_ticks(3, 5) == [0, 1, 2, 3]
    assert count_ticks(5, 2) == [0, 5] and count_ticks(5, 1) == [0]
    assert alpha_ticks(5) == (0, 0.25, 0.5, 0.75, 1.0) and alpha_ticks(3) == (0, 0.5, 1.0)
    assert alpha_ticks(2) == (0, 1.0) and alpha_ticks(1) == (0,)


class ChartApp(App):
    def __init__(self, height: int):
        super().__init__()
        self.height = height

    def compose(self):
        chart = AcceptanceChart(window=60, rolling=4)
        chart.styles.height = self.height
        yield chart


def _left_labels(text: str) -> list[str]:
    """The left axis's tick labels, top to bottom (a label row looks like `6┤...`)."""
    return [line.split("┤")[0].strip() for line in text.splitlines() if "┤" in line.split("│")[0]]


def test_legend_sits_in_the_border_and_ticks_do_not_collide():
    accepted = [1, 3, 0, 4, 2, 6, 5, 1, 0, 2, 3, 4] * 3
    gammas = [4, 4, 5, 6, 6, 7, 7, 5, 3, 4, 4, 5] * 3

    async def scenario(height: int) -> tuple[str, str]:
        app = ChartApp(height)
        async with app.run_test(size=(60, 20)) as pilot:
            chart = app.query_one(AcceptanceChart)
            for a, g in zip(accepted, gammas):
                chart.add_step(a, g, g)
            chart._dirty = True
            await pilot.pause()
            return plain(chart.render(), width=chart.size.width), str(chart.border_title)

    for height in (8, 9, 10, 13, 16):
        text, legend = run(scenario(height))
        for name in ("γ", "accepted", "α rolling 4"):
            assert name in legend
        assert "accepted" not in text and "rolling" not in text     # nothing drawn over the lines
        rows = height - 1 - 5                                       # minus the border and plotext's frame
        want = count_ticks(7, tick_count(rows))
        assert _left_labels(text) == [str(t) for t in reversed(want)], (height, text)
