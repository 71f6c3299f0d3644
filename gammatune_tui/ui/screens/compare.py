"""The compare screen: one pane per method, measured one at a time, then raced.

Measuring runs every method alone in a worker thread (the screen shows only a
progress line meanwhile, so no method's timing pays for drawing). Once all are
measured, the panes play their recorded streams together, each at its own
measured pace (`elapsed_s` of every step), so the fastest method visibly
finishes first; `r` races again. A recording opened side by side skips the
measuring. The summary table is read off the same `RunningStats` each pane
shows, so the two can never disagree.

The race's time, pause, speed and finishing order are kept by a headless
`RaceClock` (session/race_clock.py: race time is scaled so a race lasts a few
seconds even when the real runs took a fraction of one; the scale is shown, so
it stays honest; speed 0 finishes the race at once, for tests and
screenshots). The screen ticks it 30 times a second, forwards the keys to it
and draws what it says: each `MethodPane` shows its run up to the event the
clock has reached (what it has shown, in a `SessionLog`) and its place.

The screen's state that shows (`first_shown`, the page of panes in view;
`race_paused`) is reactive, and its watchers redraw the panes and the race
line.

Every method stays reachable on any screen: the panes are shown a page at a
time, as many as fit at `PANE_MIN_WIDTH` columns each (two at 80 or 100
columns, four at 160), so a pane is wide enough for its method's full name;
←/→ turn the page and 1–9 bring a method into view, and the line above the
panes names the ones shown. The ranking fits under the panes on a tall
screen; on a short one (under `SHORT_BELOW` rows, a laptop's 24) `s` switches
between the panes and the ranking, as it does everywhere.
"""

from __future__ import annotations

import time
from typing import Iterable, Sequence

from rich.console import Group
from rich.text import Text
from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Footer, Header, Label, Static

from ...render.safe_text import one_line
from ...render.tables import backfire_text, lossless_text, summary_table, verdict
from ...session.compare import CompareSummary, MethodRun, summarize
from ...session.compare_job import CompareJob
from ...session.race_clock import RaceClock
from ..widgets.compare_pane import MethodPane
from .base import GammaScreen
from .clipboard import copy_with_notice
from .compare_copy import NOTHING_YET, every_answer, one_answer, run_in_view
from .compare_messages import CompareProgress, MeasureDone, MethodMeasured, measure
from .help import COMPARE_KEYS, help_bindings

PANE_MIN_WIDTH = 34
"""Columns a pane needs for its chart, its stats and its method's name (a long title wraps, never cut)."""
SHORT_BELOW = 34
"""Below this many rows the panes and the ranking take turns (`s`)."""


# -- the screen ---------------------------------------------------------------------------------
class CompareScreen(GammaScreen):
    """Panes side by side; measuring (live) or straight to the race (recordings)."""

    DEFAULT_CSS = """
    CompareScreen #progress { width: 1fr; height: auto; padding: 0 1; background: $panel; }
    CompareScreen #pages { height: 1; padding: 0 1; display: none; text-wrap: nowrap; text-overflow: ellipsis; }
    CompareScreen.-paged #pages { display: block; }
    CompareScreen #panes { height: 1fr; }
    CompareScreen #summary { height: auto; max-height: 16; padding: 0 1; border-top: hkey $panel; }
    CompareScreen.-short #summary { display: none; }
    CompareScreen.-short MethodPane AcceptanceChart { height: 8; }
    CompareScreen.-ranking #summary { display: block; height: 1fr; max-height: 100%; overflow-y: auto; }
    CompareScreen.-ranking #panes, CompareScreen.-ranking #pages { display: none; }
    """

    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]
    HELP_KEYS = COMPARE_KEYS
    HELP_TITLE = "compare"

    BINDINGS = [
        Binding("r", "restart", "Race again"),
        Binding("space", "toggle_pause", "Pause"),
        Binding("e", "finish", "To end", show=False),
        # priority: a pane's transcript (focused by a click) would take them for its own steps
        Binding("left", "page(-1)", "Methods", show=False, priority=True),
        Binding("right", "page(1)", "Methods", priority=True),
        *[Binding(str(k), f"show_method({k - 1})", f"Method {k}", show=False) for k in range(1, 10)],
        Binding("s", "toggle_ranking", "Ranking"),
        Binding("plus", "faster", "Faster", show=False),
        Binding("minus", "slower", "Slower", show=False),
        Binding("escape", "stop", "Stop", show=False),
        Binding("ctrl+y", "copy_answer", "Copy answer", show=False),
        Binding("ctrl+t", "copy_all", "Copy all", show=False),
        *help_bindings(),
        Binding("f4", "toggle_shade", "Shade", show=False),
        Binding("f6", "app.next_theme", "Theme", show=False),
    ]

    # the screen's state; the watchers below redraw what shows it
    first_shown: var[int] = var(0, always_update=True, init=False)
    """The leftmost pane on screen: the panes of its page are shown, and named above them."""
    race_paused: var[bool] = var(False, always_update=True, init=False)
    """The race stands still (space): the race line says so, and race time resumes from the moment it moves."""

    def __init__(self, labels: Sequence[str], *, job: CompareJob | None = None,
                 runs: Sequence[MethodRun] | None = None, speed: float = 1.0, paused: bool = False,
                 title: str = "compare", warnings: Sequence[str] = ()) -> None:
        super().__init__()
        if (job is None) == (runs is None):
            raise ValueError("CompareScreen needs either a job to measure or recorded runs")
        self.labels = list(labels)
        self.job = job
        self.runs: list[MethodRun] = list(runs or [])
        self.race = RaceClock(speed)   # raises InvalidParameter for a speed that is not a number >= 0
        self.start_paused = paused
        self.screen_title = title
        self.warnings = list(warnings)
        self.summary: CompareSummary | None = None
        self.measuring = False
        self.error = ""
        self._timer: Timer | None = None   # the race's frames (30 a second), paused between races
        self.chosen_method: int | None = None  # the method last brought into view with 1–9 (what Ctrl+Y copies)

    def compose(self) -> ComposeResult:
        yield Header(icon="γ")
        yield Label("", id="progress")
        yield Label("", id="pages")
        with Horizontal(id="panes"):
            for i, label in enumerate(self.labels):
                yield MethodPane(label, id=f"pane-{i}")
        yield Static(Text("The summary appears when the race is over.", style="dim italic"), id="summary")
        yield Footer()

    @property
    def panes(self) -> list[MethodPane]:
        return list(self.query(MethodPane))

    # -- which panes are on screen ----------------------------------------------------------
    @property
    def per_page(self) -> int:
        """How many panes fit side by side at PANE_MIN_WIDTH columns each (at least one)."""
        width = self.size.width or self.app.size.width
        return max(1, min(len(self.labels), width // PANE_MIN_WIDTH))

    def show_panes(self) -> None:
        n, per = len(self.labels), self.per_page
        self.set_reactive(CompareScreen.first_shown, max(0, min(self.first_shown, n - per)))   # no watcher again
        last = self.first_shown + per
        for i, pane in enumerate(self.panes):
            pane.display = self.first_shown <= i < last
        self.set_class(per < n, "-paged")
        if per < n:
            names = " · ".join(one_line(label) for label in self.labels[self.first_shown:last])
            more = "←/→ or 1–9: the others" if n <= 9 else "←/→: the others"
            self.query_one("#pages", Label).update(Text.assemble(
                (f"methods {self.first_shown + 1}–{min(last, n)} of {n}: ", "bold"), names, (f"   {more}", "dim")))

    def watch_first_shown(self) -> None:
        self.show_panes()

    def on_resize(self) -> None:
        self.show_panes()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "page":   # only while some panes are off screen (then the footer shows it)
            return self.per_page < len(self.labels)
        return True

    def action_page(self, direction: int) -> None:
        per = self.per_page
        if per >= len(self.labels):
            return
        self.first_shown = max(0, min(len(self.labels) - per, self.first_shown + direction * per))

    def action_show_method(self, index: int) -> None:
        if not 0 <= index < len(self.labels):
            return
        self.chosen_method = index
        self.remove_class("-ranking")
        if not self.first_shown <= index < self.first_shown + self.per_page:
            self.first_shown = index   # its page comes into view

    def action_toggle_ranking(self) -> None:
        self.toggle_class("-ranking")

    def on_mount(self) -> None:
        self.show_panes()
        self.title = "gammatune"
        self.sub_title = one_line(self.screen_title)
        self.follow_theme()
        for w in self.warnings:
            self.notify(one_line(w), title="Recording", severity="warning", timeout=10)
        if self.job is not None:
            self.measuring = True
            self._progress("preparing…")
            self.run_worker(lambda: measure(self.job, self.post_message, self._warn_from_worker), thread=True,
                            group="measure", exit_on_error=False)
        else:
            for pane, run in zip(self.panes, self.runs):
                pane.set_run(run)
            self.summary = summarize(self.runs)
            self.start_race(paused=self.start_paused)

    def apply_palette(self) -> None:
        gt = self.host.gamma_theme
        for pane in self.panes:
            pane.transcript.set_palette(gt.roles, gt.background, gt.foreground)
            pane.chart.set_colours(gt.roles, gt.textual.accent or gt.textual.primary)

    def _progress(self, text: str) -> None:
        self.query_one("#progress", Label).update(Text(text))

    # -- measuring (compare_messages.measure, in a worker thread) ------------------------------
    def _warn_from_worker(self, notice: str) -> None:
        self.app.call_from_thread(self.notify, notice, title="System prompt", severity="warning", timeout=10)

    def on_compare_progress(self, msg: CompareProgress) -> None:
        if self.measuring:
            self._progress(msg.text)

    def on_method_measured(self, msg: MethodMeasured) -> None:
        self.runs.append(msg.run)
        for pane in self.panes:
            if pane.label == msg.run.label:
                pane.set_run(msg.run)

    def on_measure_done(self, msg: MeasureDone) -> None:
        self.measuring = False
        if msg.error:
            self.error = msg.error
            self._progress(f"could not measure: {one_line(msg.error)}")
            self.notify(msg.error, title="Compare failed", severity="error", timeout=10)
            return
        if not self.runs:
            self._progress("stopped before any method was measured")
            return
        self.summary = self.job.summary() if self.job is not None else summarize(self.runs)
        self.start_race()

    # -- the race: the clock (session/race_clock.py) keeps time and places; the screen draws them --------
    def start_race(self, paused: bool = False) -> None:
        panes = self.panes
        for pane in panes:
            if pane.run is not None:
                pane.reset()
        self.race.start(self.labels, [p.run.events if p.run is not None else None for p in panes],
                        time.monotonic(), paused)
        self.race_paused = paused
        if self.race.instant:
            self._show_race(self.race.to_end())
            return
        if self._timer is None:
            self._timer = self.set_interval(1 / 30, self._tick)
        else:
            self._timer.resume()
        self._show_race(self.race.advance_to(0.0))
        self._race_line()

    def _tick(self) -> None:
        if self.race.racing and not self.race.paused:
            self._show_race(self.race.tick(time.monotonic()))
        else:
            self.race.tick(time.monotonic())

    def _show_race(self, finished: list[int]) -> None:
        """Each pane drawn up to where race time has reached; those that crossed the line, placed."""
        panes = self.panes
        for i, pane in enumerate(panes):
            if pane.run is not None and not pane.done:
                pane.show_until(self.race.due(i))
        for i in finished:
            c = self.race.contestants[i]
            panes[i].finish(c.place or 0, c.total_s)
        if not self.race.racing:   # every run shown whole
            self._race_over()

    def watch_race_paused(self, paused: bool) -> None:
        self.race.set_paused(paused, time.monotonic())   # race time counts on from the moment it moves
        if self.race.racing:
            self._race_line()

    def _race_line(self) -> None:
        state = "paused" if self.race.paused else "racing"
        self._progress(
            f"{state} at ×{self.race.rate:.3g} of real time · each pane at its measured pace · "
            f"space pause · e end · r again · +/- speed · s panes ⇄ ranking")

    def _race_over(self) -> None:
        if self._timer is not None:
            self._timer.pause()
        if self.summary is None:
            self.summary = summarize(self.runs)
        s = self.summary
        self._progress(f"race over: {verdict(s)} · r to race again · s panes ⇄ ranking")
        box = self.query_one("#summary", Static)
        width = (box.content_region.width or self.size.width - 2) or None
        warning = backfire_text(s)
        box.update(Group(summary_table(s, width), lossless_text(s), *([warning] if warning is not None else [])))

    # -- actions -----------------------------------------------------------------------------------
    def action_restart(self) -> None:
        if not self.measuring and any(p.run is not None for p in self.panes):
            self.start_race()

    def action_toggle_pause(self) -> None:
        if self.race.racing:
            self.race_paused = not self.race_paused

    def action_finish(self) -> None:
        if self.race.racing:
            self._show_race(self.race.to_end())

    def action_faster(self) -> None:
        self._change_speed(2.0)

    def action_slower(self) -> None:
        self._change_speed(0.5)

    def _change_speed(self, factor: float) -> None:
        speed = self.race.change_speed(factor)
        if self.race.racing:
            self._race_line()
        self.notify(f"race speed ×{speed:g}", timeout=1)

    def action_stop(self) -> None:
        if self.measuring and self.job is not None:
            self.job.stop()
            self._progress("stopping after the current step…")
        elif self.race.racing:
            self.action_finish()

    def action_toggle_shade(self) -> None:
        for pane in self.panes:
            pane.transcript.shade = not pane.transcript.shade

    # -- copy (compare_copy.py: which text; clipboard.py: the one way to the clipboard) ----------
    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A click on a pane's transcript chooses its method, as 1–9 does."""
        for i, pane in enumerate(self.panes):
            if event.widget is pane or pane in event.widget.ancestors:
                self.chosen_method = i

    def action_copy_answer(self) -> str:
        return self._copy(one_answer(run_in_view(self.runs, self.chosen_method, self.first_shown, self.per_page)))

    def action_copy_all(self) -> str:
        return self._copy(every_answer(self.runs))

    def _copy(self, answer: tuple[str, str] | None) -> str:
        if answer is None:
            self.notify(NOTHING_YET, severity="warning", timeout=3)
            return ""
        return copy_with_notice(self, *answer)

    def on_unmount(self) -> None:
        if self.measuring and self.job is not None:
            self.job.stop()

    # -- the command palette -------------------------------------------------------------------
    def system_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette (the app adds help, themes and quit)."""
        yield SystemCommand("Race again", "Replay every method at its measured pace (r)", self.action_restart)
        yield SystemCommand("Pause / resume race", "Space", self.action_toggle_pause)
        yield SystemCommand("Finish race", "Show the end at once (e)", self.action_finish)
        yield SystemCommand("Panes / ranking", "Switch between the method panes and the ranking (s)",
                            self.action_toggle_ranking)
        yield SystemCommand("Copy answer", "The answer of the method in view as plain text (Ctrl+Y)",
                            self.action_copy_answer)
        yield SystemCommand("Copy every answer", "Each method's answer under its name, as plain text (Ctrl+T)",
                            self.action_copy_all)
        for i, label in enumerate(self.labels):
            yield SystemCommand(f"Show method: {one_line(label)}", f"Bring its pane into view ({i + 1})"
                                if i < 9 else "Bring its pane into view", lambda i=i: self.action_show_method(i))
