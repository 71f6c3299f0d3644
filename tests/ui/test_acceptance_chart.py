"""The acceptance chart: legend outside the plot, y ticks that fit the height (so none collide)."""

from __future__ import annotations

from textual.app import App

from gammatune_tui.session.stats import ROLLING_STEPS
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
        chart = AcceptanceChart(window=60)
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
        for name in ("γ planned", "drafted", "accepted", f"α last {ROLLING_STEPS}"):
            assert name in legend
        assert "accepted" not in text and "last" not in text     # nothing drawn over the lines
        rows = height - 1 - 5                                       # minus the border and plotext's frame
        want = count_ticks(7, tick_count(rows))
        assert _left_labels(text) == [str(t) for t in reversed(want)], (height, text)


# -- planned γ, drafted and accepted apart; one rolling window; steps numbered as the step line numbers them --
def _coloured(chart) -> str:
    from io import StringIO

    from rich.console import Console

    console = Console(file=StringIO(), width=chart.size.width, color_system="truecolor", force_terminal=True)
    console.print(chart.render())
    return console.file.getvalue()


def _truecolour(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"38;2;{r};{g};{b}"


def test_windows_that_tau_stopped_early_show_apart_from_a_steady_gamma():
    """γ holds at 4, but the draft stops early on some steps: the drafted line shows under γ there, and only there."""

    async def scenario(drafted: list[int]) -> str:
        app = ChartApp(16)
        async with app.run_test(size=(70, 20)) as pilot:
            chart = app.query_one(AcceptanceChart)
            for d in drafted:
                chart.add_step(min(d, 2), 4, d)
            chart._dirty = True
            await pilot.pause()
            return _coloured(chart)

    grey = _truecolour(AcceptanceChart.DRAFTED_COLOUR)
    assert grey in run(scenario([4, 4, 1, 4, 4, 2, 4, 4, 1, 4]))
    assert grey not in run(scenario([4] * 10))   # nothing stopped early: the drafted line lies under γ


def test_each_steps_gamma_is_drawn_over_the_number_the_step_line_gives_it():
    from gammatune_tui.engine.events import StepEvent, TargetToken
    from gammatune_tui.ui.widgets.step_inspector import render_step

    gammas = [2, 2, 3, 5, 8, 4, 1]
    chart = AcceptanceChart(window=60)
    events = []
    for i, g in enumerate(gammas):
        events.append(StepEvent(step=i, method="gammatune", params={}, gamma=g, drafted=[], accepted=0,
                                target_token=TargetToken(1, "x", "bonus"), emitted=[], gamma_next=g,
                                draft_s=0.0, verify_s=0.0))
        chart.add_step(0, g, 0)
    xs, ys = chart.step_lines()["γ planned"]
    # the flat pieces of the line: centre → value
    flat = {(xs[k] + xs[k + 1]) / 2: ys[k] for k in range(len(xs) - 1) if ys[k] == ys[k + 1] and xs[k + 1] - xs[k] >= 1}
    for i, ev in enumerate(events):
        line = plain(render_step(ev, index=i, total=len(events)))
        n = int(line.split("step ")[1].split("/")[0])           # "step n/7", as the user reads it
        assert flat[n] == ev.gamma, (n, flat)


def test_one_rolling_window_for_the_chart_the_stats_panel_and_the_compare_panes():
    from gammatune_tui.engine.events import StepEvent, TargetToken
    from gammatune_tui.session.stats import RunningStats
    from gammatune_tui.ui.widgets.compare_pane import MethodPane
    from gammatune_tui.ui.widgets.stats_panel import render_stats

    steps = [(a, d) for a, d in zip([0, 4, 1, 3, 4, 0, 2, 4, 4, 1, 0, 0, 3, 4, 2, 1, 4, 4, 0, 2, 3, 1, 4, 0, 1] * 2,
                                    [4, 4, 2, 4, 4, 1, 3, 4, 4, 4, 1, 2, 4, 4, 4, 2, 4, 4, 3, 4, 4, 2, 4, 1, 4] * 2)]
    stats = RunningStats()
    chat_chart = AcceptanceChart()
    pane_chart = next(w for w in MethodPane("m").compose() if isinstance(w, AcceptanceChart))
    from gammatune_tui.engine.events import DraftedToken

    for i, (a, d) in enumerate(steps):
        drafted = [DraftedToken(id=1, text="x", top_prob=0.9, chosen_prob=0.9) for _ in range(d)]
        stats.add(StepEvent(step=i, method="specdecode", params={}, gamma=4, drafted=drafted, accepted=a,
                            target_token=TargetToken(1, "x", "bonus"), emitted=[], gamma_next=4,
                            draft_s=0.0, verify_s=0.0))
        chat_chart.add_step(a, 4, d)
        pane_chart.add_step(a, 4, d)
    assert stats.window == chat_chart.rolling == pane_chart.rolling == ROLLING_STEPS
    assert chat_chart.rolling_acceptance()[-1] == pane_chart.rolling_acceptance()[-1] == stats.rolling_acceptance
    text = plain(render_stats(stats))
    assert f"last {ROLLING_STEPS} steps {stats.rolling_acceptance:.2f}" in text


def test_the_legend_shortens_rather_than_being_cut_on_a_narrow_chart():
    from rich.text import Text

    async def scenario(width: int) -> tuple[str, int]:
        app = ChartApp(12)
        async with app.run_test(size=(width, 16)) as pilot:
            chart = app.query_one(AcceptanceChart)
            await pilot.pause()
            return Text.from_markup(str(chart.border_title)).plain, chart.size.width

    wide, _ = run(scenario(70))
    assert "γ planned" in wide and f"α last {ROLLING_STEPS}" in wide
    for width in (34, 40):                       # a compare pane at 80 columns, or at 160
        legend, chart_width = run(scenario(width))
        assert len(legend) + 2 <= chart_width, (width, legend)
        for name in ("drafted", "γ", "accepted", f"α {ROLLING_STEPS}"):
            assert name in legend
