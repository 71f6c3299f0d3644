"""The paper's Figure 2a, live: per step the planned γ, the drafted length and the accepted count, plus rolling α.

Three lines, so what a policy does is visible even while γ holds still: γ
(what the policy planned), drafted (how many tokens the draft actually
proposed: below γ where a confidence threshold τ stopped the window early)
and accepted (how many of those the target kept). Each step's values are
drawn flat over its own step number — numbered from 1, as the step line
and the replay player count them — so a change of γ shows at the step
that planned it. Rolling α (right axis) covers `ROLLING_STEPS` steps, the
window the stats panel uses too.

Keeps the last `window` steps on screen (press the toggle for the whole
history) and draws a vertical mark at each step where new settings took
effect. The legend sits in the top border (series names in their colours),
never over the lines, and the y ticks are chosen from the height so no two
land on one row. Adding a step only stores numbers; the plot is rebuilt at most every
`interval` seconds, inside `render()`, so a fast session is not slowed down
by plotting.

Usage::

    chart = AcceptanceChart(window=60)
    chart.add_step(accepted=3, gamma=4, drafted=4, changed=False)
    chart.full_history = True
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.app import RenderResult
from textual.color import Color
from textual.reactive import reactive
from textual_plotext import PlotextPlot

from ...session.stats import ROLLING_STEPS, rolling_acceptance_series
from ..themes import FALLBACK, TokenRole


def _rgb(colour: str) -> tuple[int, int, int]:
    return Color.parse(colour).rgb


def _hex(colour: str) -> str:
    return "#%02x%02x%02x" % _rgb(colour)


PLOT_ROWS_OFF = 5
"""Rows plotext spends outside the plot area: title, frame top and bottom, x tick labels, x label."""
ALPHA_TICKS = ((0, 0.25, 0.5, 0.75, 1.0), (0, 0.5, 1.0), (0, 1.0))


def tick_count(rows: int) -> int:
    """How many y tick labels fit on `rows` plot rows, about 1.5 rows apart (so none share a row)."""
    if rows < 2:
        return 1
    return max(2, 1 + int((rows - 1) / 1.5))


def count_ticks(top: int, n: int) -> list[int]:
    """At most n whole-number ticks from 0 up to at least `top`, evenly spaced (the last may pass top)."""
    if n < 2 or top <= 0:
        return [0] if n < 2 else [0, max(1, top)]
    step = max(1, -(-top // (n - 1)))
    last = step * -(-top // step)
    return list(range(0, last + 1, step))


def alpha_ticks(n: int) -> tuple[float, ...]:
    """The right axis (rolling α in [0, 1]): quarters when there is room, else halves, else the ends."""
    return next((t for t in ALPHA_TICKS if len(t) <= n), (0,))


def _int_ticks(lo: int, hi: int, n: int) -> list[int]:
    """About n whole-number ticks from lo to hi (steps and token counts are integers)."""
    span = max(1, hi - lo)
    step = max(1, -(-span // n))
    return list(range(lo, hi + 1, step))


class AcceptanceChart(PlotextPlot):
    DEFAULT_CSS = """
    AcceptanceChart { height: 13; min-height: 8; border-top: hkey $panel; border-title-align: left; }
    """

    full_history = reactive(False)

    DRAFTED_COLOUR = "#9a9aa6"
    """The drafted-length line: a neutral grey, apart from the three token colours on any theme."""

    def __init__(self, *, window: int = 60, interval: float = 0.4,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.window = window
        self.rolling = ROLLING_STEPS
        self.interval = interval
        self.accepted: list[int] = []
        self.gammas: list[int] = []
        self.drafted: list[int] = []
        self.changes: list[int] = []
        self.roles: dict[str, TokenRole] = dict(FALLBACK.roles)
        self.accent = "#f2b84b"
        self._scheduled = False
        self._dirty = True
        self._cached: RenderResult | None = None
        self._cached_size: tuple[int, int, str] | None = None
        self._build_s = 0.0
        self._session_start = 0    # steps before the running session (`begin_session`)
        self._turn_starts: list[int] = []   # the step count at each session's (turn's) start
        self._legend()

    # -- data ------------------------------------------------------------------
    def add_step(self, accepted: int, gamma: int, drafted: int, changed: bool = False) -> None:
        if changed:
            self.changes.append(len(self.accepted))
        self.accepted.append(accepted)
        self.gammas.append(gamma)
        self.drafted.append(drafted)
        self._schedule()

    def clear(self) -> None:
        self._session_start = 0
        self._turn_starts.clear()
        self.accepted.clear()
        self.gammas.clear()
        self.drafted.clear()
        self.changes.clear()
        self._schedule()

    def begin_session(self) -> None:
        """The running session starts here: what `rewind_session` goes back to."""
        self._session_start = self.step_count
        self._turn_starts = [t for t in self._turn_starts if t < self.step_count] + [self.step_count]

    def rewind_session(self) -> None:
        """Take the running session's steps back out (a replay redraws it from a prefix)."""
        self.truncate(self._session_start)

    def truncate(self, n_steps: int) -> None:
        """Keep the first `n_steps` steps (a replay stepping back)."""
        for xs in (self.accepted, self.gammas, self.drafted):
            del xs[n_steps:]
        self.changes = [c for c in self.changes if c < n_steps]
        self._turn_starts = [t for t in self._turn_starts if t <= n_steps]
        self._schedule()

    def axis_label(self) -> str:
        """The x axis's name. Its steps run on across turns while the inspector counts each turn's from 1,
        so after the first turn it says where the last one began: 'step, across turns (turn 2 from 7)'."""
        if len(self._turn_starts) < 2:
            return "step"
        return f"step, across turns (turn {len(self._turn_starts)} from {self._turn_starts[-1] + 1})"

    @property
    def step_count(self) -> int:
        return len(self.accepted)

    def set_colours(self, roles: dict[str, TokenRole], accent: str) -> None:
        self.roles, self.accent = dict(roles), accent
        self._legend()
        self._dirty = True
        self.refresh()

    def series(self) -> list[tuple[str, str]]:
        """(name, colour) of each line, in drawing order; the legend and the plot both use it.

        Drafted is drawn first, so where it equals γ the γ line covers it and
        it shows only where the draft stopped short of the plan.
        """
        return [("drafted", self.DRAFTED_COLOUR), ("γ planned", self.roles["prompt"].color),
                ("accepted", self.roles["draft"].color), (f"α last {self.rolling}", self.accent)]

    def step_lines(self, lo: int = 0, hi: int | None = None) -> dict[str, tuple[list[float], list[float]]]:
        """The drafted, γ and accepted lines of steps lo..hi-1 as (xs, ys): flat over each step's number (from 1)."""
        hi = len(self.accepted) if hi is None else hi
        out = {}
        for name, values in (("drafted", self.drafted), ("γ planned", self.gammas), ("accepted", self.accepted)):
            xs: list[float] = []
            ys: list[float] = []
            for i in range(lo, hi):
                xs += [i + 0.5, i + 1.5]
                ys += [values[i], values[i]]
            out[name] = (xs, ys)
        return out

    def _legend(self) -> None:
        """The series names in the top border; shortened ("γ", "α 10") where the full ones would be cut."""
        width = self.size.width if self.is_mounted else 0
        for short in (False, True):
            legend = Text()
            for i, (name, colour) in enumerate(self.series()):
                if i:
                    legend.append(" " if short else "  ")
                if short:
                    name = {"γ planned": "γ", f"α last {self.rolling}": f"α {self.rolling}"}.get(name, name)
                legend.append(f"━ {name}", style=f"bold {_hex(colour)}")
            if not width or legend.cell_len + 2 <= width:
                break
        self.border_title = legend

    def on_resize(self) -> None:
        self._legend()

    def rolling_acceptance(self) -> list[float]:
        return rolling_acceptance_series(self.accepted, self.drafted, self.rolling)

    def visible_range(self) -> tuple[int, int]:
        n = len(self.accepted)
        if self.full_history or n <= self.window:
            return 0, n
        return n - self.window, n

    # -- drawing ---------------------------------------------------------------
    def _schedule(self) -> None:
        self._dirty = True
        if not self.is_mounted:
            return
        if not self._scheduled:
            self._scheduled = True
            # plotting is costly: keep it under ~4% of a core however slow the machine
            self.set_timer(max(self.interval, 25 * self._build_s), self._tick)

    def _tick(self) -> None:
        self._scheduled = False
        self.refresh()

    def watch_full_history(self) -> None:
        self._dirty = True
        self.refresh()

    def _build(self) -> None:
        # plotext's stubs type `yside` as a float and ticks as list[float]; it takes "left"/"right" and ints
        plt: Any = self.plt
        plt.clear_data()
        lo, hi = self.visible_range()
        which = (" (all steps)" if self.full_history else
                 f" (last {self.window})" if len(self.accepted) > self.window else "")
        title = "Tokens per step" + which   # which line is which: the legend in the border
        if len(title) > self.size.width - 2:  # plotext drops a title that does not fit, leaving a blank row
            title = title[: max(0, self.size.width - 2)]
        plt.title(title)
        plt.xlabel(self.axis_label())
        n_ticks = tick_count(self.size.height - PLOT_ROWS_OFF)
        if hi <= lo:
            plt.plot([0], [0], marker=" ")
            plt.xlim(1, 10)
            ticks = count_ticks(4, n_ticks)
            plt.ylim(0, ticks[-1])
            plt.xticks([1, 5, 10])
            plt.yticks(ticks)
            return
        # no plotext labels: its legend is drawn inside the plot, over the lines (ours is the border title)
        colours = dict(self.series())
        for name, (xs, ys) in self.step_lines(lo, hi).items():
            plt.plot(xs, ys, marker="braille", color=_rgb(colours[name]))
        roll = self.rolling_acceptance()[lo:hi]
        plt.plot([i + 1 for i in range(lo, hi)], roll, marker="braille", yside="right",
                 color=_rgb(colours[f"α last {self.rolling}"]))
        ticks = count_ticks(max(1, max(self.gammas[lo:hi] + self.accepted[lo:hi] + self.drafted[lo:hi])), n_ticks)
        plt.ylim(0, ticks[-1] + 0.5, yside="left")
        plt.yticks(ticks, yside="left")
        plt.ylim(0, 1.05, yside="right")
        right = alpha_ticks(n_ticks)
        plt.yticks(list(right), [f"{v:g}".lstrip("0") or "0" for v in right], yside="right")
        plt.xlim(lo + 0.5, hi + 0.5)
        plt.xticks(_int_ticks(lo + 1, hi, 6))
        for c in self.changes:
            if lo <= c < hi:
                plt.vline(c + 0.5, color=_rgb(self.roles["target"].color))   # where the changed step begins

    def render(self) -> RenderResult:
        """Rebuild the plot only when data, colours or size changed (a repaint reuses the last one)."""
        size = (self.size.width, self.size.height, self.app.theme)
        if self._dirty or self._cached is None or size != self._cached_size:
            t0 = time.perf_counter()
            self._build()
            self._dirty = False
            self._cached = super().render()
            self._cached_size = size
            self._build_s = time.perf_counter() - t0
        return self._cached
