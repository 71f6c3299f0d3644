"""The compare screen: one pane per method, measured one at a time, then raced.

Measuring runs every method alone in a worker thread (the screen shows only a
progress line meanwhile, so no method's timing pays for drawing). Once all are
measured, the panes play their recorded streams together, each at its own
measured pace (`elapsed_s` of every step), so the fastest method visibly
finishes first; `r` races again. A recording opened side by side skips the
measuring. The summary table is read off the same `RunningStats` each pane
shows, so the two can never disagree.

Race time is scaled so a race lasts a few seconds even when the real runs took
a fraction of one (the scale is shown, so it stays honest); speed 0 finishes
the race at once (tests, screenshots).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Static

from ...engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ...engine.policies import PolicySettings
from ...engine.sampling import SamplingConfig
from ...errors import GammatuneError
from ...session.compare import CompareRunner, CompareSummary, MethodRun, engine_factory, summarize
from ...session.printer import lossless_text, summary_table
from ...session.recording import RecordingWriter
from ...session.replay import check_speed, schedule
from ...session.stats import RunningStats
from ..safe_text import printable
from ..widgets.acceptance_chart import AcceptanceChart
from ..widgets.token_stream import Piece, TokenStream

MIN_RACE_S = 4.0
"""A race shorter than this in real time is slowed down to last this long."""
MAX_RACE_S = 60.0
"""A race longer than this is sped up."""
ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th")


# -- what the screen measures --------------------------------------------------------------
class CompareJob:
    """Loads the pair once (unless given a decoder factory) and runs the methods one by one."""

    def __init__(self, methods: Sequence[str], settings: PolicySettings, sampling: SamplingConfig, prompt: Any,
                 max_new_tokens: int, *, user_text: str | None = None, factory: Callable | None = None,
                 load: Callable[..., Any] | None = None, record: RecordingWriter | None = None,
                 warmup_tokens: int = 8):
        self.methods = list(methods)
        self.settings, self.sampling = settings, sampling
        self.prompt, self.user_text = prompt, user_text
        self.max_new_tokens = max_new_tokens
        self.factory = factory
        self.load = load
        self.record = record
        self.warmup_tokens = warmup_tokens
        self.runner: CompareRunner | None = None
        self._stopped = False

    def prepare(self, progress: Callable[[str, float], None]) -> None:
        if self.factory is None:
            if self.load is None:
                raise GammatuneError("no models to compare (neither a pair loader nor a decoder factory)")
            pair = self.load(progress)
            self.factory = engine_factory(pair)
        progress("ready", 1.0)

    def measure(self, progress: Callable[[int, int, str, int], None],
                on_method_done: Callable[[MethodRun], None]) -> CompareSummary:
        self.runner = CompareRunner(self.factory, self.methods, self.settings, self.sampling, self.prompt,
                                    self.max_new_tokens, user_text=self.user_text,
                                    warmup_tokens=self.warmup_tokens)
        if self._stopped:
            self.runner.stop()
        try:
            return self.runner.run(progress, self.record, on_method_done)
        finally:
            if self.record is not None:
                self.record.close()

    def stop(self) -> None:
        self._stopped = True
        if self.runner is not None:
            self.runner.stop()


# -- messages from the worker ----------------------------------------------------------------
class CompareProgress(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CompareProgress)


class MethodMeasured(Message):
    def __init__(self, run: MethodRun) -> None:
        super().__init__()
        self.run = run


class MeasureDone(Message):
    def __init__(self, error: str = "") -> None:
        super().__init__()
        self.error = error


# -- one pane ---------------------------------------------------------------------------------
def pane_stats(stats: RunningStats) -> Text:
    """A pane's numbers (the same RunningStats the summary ranks)."""
    s = stats
    t = Text()
    t.append(f"{s.tokens_per_s:,.1f}", style="bold")
    t.append(" tok/s", style="dim")
    t.append(f" · α {s.acceptance_rate:.2f}\n")
    t.append(f"{s.tokens_per_step:.2f}", style="bold")
    t.append(" tok/step", style="dim")
    t.append(f" · γ̄ {s.mean_gamma:.1f}\n")
    t.append(f"target {s.target_calls} · draft {s.draft_calls}", style="dim")
    t.append(f"\n{s.tokens} tokens · {s.elapsed_s:.2f} s", style="dim")
    return t


class MethodPane(Vertical):
    """Transcript, chart and stats of one method; fed one event at a time."""

    DEFAULT_CSS = """
    MethodPane { width: 1fr; min-width: 16; border-right: vkey $panel; }
    MethodPane .pane-title { width: 1fr; height: 1; padding: 0 1; background: $panel; text-style: bold;
                             text-wrap: nowrap; text-overflow: ellipsis; }
    MethodPane.-winner .pane-title { background: $success 40%; }
    MethodPane TokenStream { height: 1fr; }
    MethodPane AcceptanceChart { height: 12; min-height: 6; }
    MethodPane .pane-stats { height: auto; padding: 0 1; }
    """

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.run: MethodRun | None = None
        self.stats = RunningStats()
        self.times: list[float] = []
        self.fed = 0
        self.place: int | None = None
        self.status = "waiting"

    def compose(self) -> ComposeResult:
        yield Label(printable(self.label, keep_newlines=False), classes="pane-title")
        yield TokenStream(classes="pane-transcript")
        yield AcceptanceChart(window=40, rolling=8, classes="pane-chart")
        yield Static(Text("waiting to be measured…", style="dim italic"), classes="pane-stats")

    @property
    def transcript(self) -> TokenStream:
        return self.query_one(TokenStream)

    @property
    def chart(self) -> AcceptanceChart:
        return self.query_one(AcceptanceChart)

    def set_run(self, run: MethodRun) -> None:
        self.run = run
        self.times = schedule(run.events, cap=None)
        s = run.stats
        self.query_one(".pane-stats", Static).update(
            Text(f"measured: {s.tokens} tokens in {s.elapsed_s:.2f} s", style="dim italic"))

    @property
    def total_s(self) -> float:
        return self.times[-1] if self.times else 0.0

    @property
    def done(self) -> bool:
        return self.run is not None and self.fed >= len(self.run.events)

    def reset(self) -> None:
        self.transcript.clear()
        self.chart.clear()
        self.stats = RunningStats()
        self.fed = 0
        self.place = None
        self.remove_class("-winner")
        self.query_one(".pane-title", Label).update(printable(self.label, keep_newlines=False))

    def advance(self, t: float) -> bool:
        """Feeds every event due by race time t; True if anything was drawn."""
        if self.run is None:
            return False
        events = self.run.events
        start = self.fed
        steps: list[StepEvent] = []
        while self.fed < len(events) and self.times[self.fed] <= t:
            ev = events[self.fed]
            self.fed += 1
            self.stats.add(ev)
            if isinstance(ev, SessionHeader):
                user = ev.user_text or ev.prompt
                self.transcript.append(user, "prompt")
                self.transcript.append("\n", "info")
            elif isinstance(ev, StepEvent):
                steps.append(ev)
        if steps:
            pieces: list[Piece] = []
            for ev in steps:
                for i, tok in enumerate(ev.emitted):
                    role = "draft" if tok.source == "draft" else "target"
                    conf = ev.drafted[i].chosen_prob if role == "draft" and i < len(ev.drafted) else None
                    pieces.append(Piece(printable(tok.text), role, ev.step, conf))
                self.chart.add_step(ev.accepted, ev.gamma, len(ev.drafted), ev.settings_changed)
            self.transcript.append_pieces([p for p in pieces if p.text])
        if self.fed != start:
            self.query_one(".pane-stats", Static).update(pane_stats(self.stats))
            return True
        return False

    def finish(self, place: int) -> None:
        self.place = place
        self.set_class(place == 0, "-winner")
        ordinal = ORDINALS[place] if place < len(ORDINALS) else f"{place + 1}th"
        self.query_one(".pane-title", Label).update(
            f"{ordinal} ✓ {printable(self.label, keep_newlines=False)} · {self.total_s:.2f} s")


# -- the screen ---------------------------------------------------------------------------------
class CompareScreen(Screen):
    """Panes side by side; measuring (live) or straight to the race (recordings)."""

    DEFAULT_CSS = """
    CompareScreen #progress { height: 1; padding: 0 1; background: $panel; }
    CompareScreen #panes { height: 1fr; }
    CompareScreen #summary { height: auto; max-height: 14; padding: 0 1; border-top: hkey $panel; }
    """

    BINDINGS = [
        Binding("r", "restart", "Race again"),
        Binding("space", "toggle_pause", "Pause"),
        Binding("e", "finish", "To end"),
        Binding("plus", "faster", "Faster", show=False),
        Binding("minus", "slower", "Slower", show=False),
        Binding("escape", "stop", "Stop", show=False),
        Binding("f1", "app.help", "Help"),
        Binding("question_mark", "app.help", "Help", show=False),
        Binding("f2", "app.screenshot_svg", "Screenshot"),
        Binding("f4", "toggle_shade", "Shade", show=False),
        Binding("f6", "app.next_theme", "Theme"),
    ]

    def __init__(self, labels: Sequence[str], *, job: CompareJob | None = None,
                 runs: Sequence[MethodRun] | None = None, speed: float = 1.0, paused: bool = False,
                 title: str = "compare", warnings: Sequence[str] = ()) -> None:
        super().__init__()
        if (job is None) == (runs is None):
            raise ValueError("CompareScreen needs either a job to measure or recorded runs")
        self.labels = list(labels)
        self.job = job
        self.runs: list[MethodRun] = list(runs or [])
        self.speed = check_speed(speed)
        self.start_paused = paused
        self.screen_title = title
        self.warnings = list(warnings)
        self.summary: CompareSummary | None = None
        self.measuring = False
        self.error = ""
        self.racing = False
        self.race_paused = False
        self.race_scale = 1.0
        self._race_t = 0.0            # race time (recorded seconds) reached so far
        self._wall = 0.0              # wall clock at the last tick
        self._timer = None
        self.finish_order: list[str] = []
        self.races = 0

    def compose(self) -> ComposeResult:
        yield Header(icon="γ")
        yield Label("", id="progress")
        with Horizontal(id="panes"):
            for i, label in enumerate(self.labels):
                yield MethodPane(label, id=f"pane-{i}")
        yield Static(Text("The summary appears when the race is over.", style="dim italic"), id="summary")
        yield Footer()

    @property
    def panes(self) -> list[MethodPane]:
        return list(self.query(MethodPane))

    def on_mount(self) -> None:
        self.title = "gammatune"
        self.sub_title = printable(self.screen_title, keep_newlines=False)
        self.apply_palette()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.apply_palette())
        for w in self.warnings:
            self.notify(printable(w, keep_newlines=False), title="Recording", severity="warning", timeout=10)
        if self.job is not None:
            self.measuring = True
            self._progress("preparing…")
            self.run_worker(self._measure, thread=True, group="measure", exit_on_error=False)
        else:
            for pane, run in zip(self.panes, self.runs):
                pane.set_run(run)
            self.summary = summarize(self.runs)
            self.start_race(paused=self.start_paused)

    def apply_palette(self) -> None:
        gt = getattr(self.app, "gamma_theme", None)
        if gt is None:
            return
        for pane in self.panes:
            pane.transcript.set_palette(gt.roles, gt.background, gt.foreground)
            pane.chart.set_colours(gt.roles, gt.textual.accent or gt.textual.primary)

    def _progress(self, text: str) -> None:
        self.query_one("#progress", Label).update(Text(text))

    # -- measuring (worker thread: only post_message) ---------------------------------------
    def _measure(self) -> None:
        job = self.job
        assert job is not None
        last = [0.0]

        def loading(stage: str, frac: float) -> None:
            pct = max(0.0, min(1.0, float(frac))) * 100
            self.post_message(CompareProgress(f"loading models: {printable(str(stage), keep_newlines=False)} {pct:.0f}%"))

        def progress(i: int, n: int, label: str, tokens: int) -> None:
            now = time.monotonic()
            if i < n and (tokens == 0 or now - last[0] > 0.25):
                last[0] = now
                self.post_message(CompareProgress(
                    f"measuring {i + 1}/{n}: {label} · {tokens} tokens  "
                    f"(each method runs alone; the race starts when all are measured)"))

        try:
            job.prepare(loading)
            job.measure(progress, lambda run: self.post_message(MethodMeasured(run)))
        except GammatuneError as exc:
            self.post_message(MeasureDone(str(exc)))
        except Exception as exc:  # a failing model must not kill the UI
            self.post_message(MeasureDone(f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(MeasureDone())

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
            self._progress(f"could not measure: {printable(msg.error, keep_newlines=False)}")
            self.notify(msg.error, title="Compare failed", severity="error", timeout=10)
            return
        if not self.runs:
            self._progress("stopped before any method was measured")
            return
        self.summary = summarize(self.runs)
        self.start_race()

    # -- the race ------------------------------------------------------------------------------
    def start_race(self, paused: bool = False) -> None:
        measured = [p for p in self.panes if p.run is not None]
        for pane in measured:
            pane.reset()
        self.finish_order = []
        self.races += 1
        longest = max((p.total_s for p in measured), default=0.0)
        if longest <= 0:
            self.race_scale = 1.0
        elif longest < MIN_RACE_S:
            self.race_scale = longest / MIN_RACE_S
        elif longest > MAX_RACE_S:
            self.race_scale = longest / MAX_RACE_S
        else:
            self.race_scale = 1.0
        self._race_t = 0.0
        self._wall = time.monotonic()
        self.racing = True
        self.race_paused = paused
        if self.speed == 0:
            self._advance_to(float("inf"))
            return
        if self._timer is None:
            self._timer = self.set_interval(1 / 30, self._tick)
        else:
            self._timer.resume()
        self._advance_to(0.0)
        self._race_line()

    @property
    def rate(self) -> float:
        """Recorded seconds per wall second."""
        return self.race_scale * self.speed

    def _tick(self) -> None:
        now = time.monotonic()
        if self.racing and not self.race_paused:
            self._race_t += (now - self._wall) * self.rate
            self._advance_to(self._race_t)
        self._wall = now

    def _advance_to(self, t: float) -> None:
        finished = []
        for pane in self.panes:
            if pane.run is None or pane.done:
                continue
            pane.advance(t)
            if pane.done:
                finished.append(pane)
        for pane in sorted(finished, key=lambda p: p.total_s):  # several may cross the line in one tick
            pane.finish(len(self.finish_order))
            self.finish_order.append(pane.label)
        if all(p.done for p in self.panes if p.run is not None):
            self._race_over()

    def _race_line(self) -> None:
        state = "paused" if self.race_paused else "racing"
        self._progress(
            f"{state} at ×{self.rate:.3g} of real time · each pane at its measured pace · "
            f"space pause · e end · r again · +/- speed")

    def _race_over(self) -> None:
        self.racing = False
        if self._timer is not None:
            self._timer.pause()
        if self.summary is None:
            self.summary = summarize(self.runs)
        s = self.summary
        winner = s.rows[0] if s.rows else None
        line = "race over"
        if winner is not None:
            line += f": {winner.label} first, {winner.tokens_per_s:,.1f} tok/s"
            if winner.speedup is not None:
                line += f" ({winner.speedup:.2f}× specdecode)"
        self._progress(line + " · r to race again")
        self.query_one("#summary", Static).update(Group(summary_table(s), lossless_text(s)))

    # -- actions -----------------------------------------------------------------------------------
    def action_restart(self) -> None:
        if not self.measuring and any(p.run is not None for p in self.panes):
            self.start_race()

    def action_toggle_pause(self) -> None:
        if self.racing:
            self.race_paused = not self.race_paused
            self._wall = time.monotonic()
            self._race_line()

    def action_finish(self) -> None:
        if self.racing:
            self._advance_to(float("inf"))

    def action_faster(self) -> None:
        self._set_speed(self.speed * 2 if self.speed else 1.0)

    def action_slower(self) -> None:
        self._set_speed(max(0.125, self.speed / 2) if self.speed else 1.0)

    def _set_speed(self, speed: float) -> None:
        self.speed = check_speed(min(1000.0, speed))
        if self.racing:
            self._race_line()
        self.notify(f"race speed ×{self.speed:g}", timeout=1)

    def action_stop(self) -> None:
        if self.measuring and self.job is not None:
            self.job.stop()
            self._progress("stopping after the current step…")
        elif self.racing:
            self.action_finish()

    def action_toggle_shade(self) -> None:
        for pane in self.panes:
            pane.transcript.shade = not pane.transcript.shade

    def on_unmount(self) -> None:
        if self.measuring and self.job is not None:
            self.job.stop()


# -- the app around it ---------------------------------------------------------------------------
def _compare_app_class():
    from ..app import GammaTuneApp
    from textual.app import SystemCommand

    class CompareApp(GammaTuneApp):
        """GammaTuneApp showing a CompareScreen instead of the chat screen."""

        CSS_PATH = str(Path(__file__).resolve().parent.parent / "gammatune.tcss")  # relative paths follow the subclass

        def __init__(self, screen: CompareScreen, *, theme: str | None = None) -> None:
            super().__init__(None, theme=theme)  # type: ignore[arg-type]  (the chat screen is never shown)
            self.compare = screen

        def on_mount(self, event) -> None:
            event.prevent_default()
            self.push_screen(self.compare)
            for w in self.theme_warnings:
                self.notify(w, title="Theme skipped", severity="warning", timeout=8)

        def get_system_commands(self, screen):
            c = self.compare
            yield SystemCommand("Race again", "Replay every method at its measured pace (r)", c.action_restart)
            yield SystemCommand("Pause / resume race", "Space", c.action_toggle_pause)
            yield SystemCommand("Finish race", "Show the end at once (e)", c.action_finish)
            yield SystemCommand("Help: keys", "Show every key binding (F1 or ?)", self.action_help)
            yield SystemCommand("Save SVG screenshot", "Write the current screen to an .svg file (F2)",
                                self.action_screenshot_svg)
            for name in sorted(self.gamma_themes):
                gt = self.gamma_themes[name]
                yield SystemCommand(f"Theme: {name}", gt.description or f"Switch to the {name} theme",
                                    lambda name=name: self.set_theme(name))
            yield SystemCommand("Quit", "Quit gammatune (Ctrl+Q)", self.action_quit)

    return CompareApp


def make_compare_app(screen: CompareScreen, *, theme: str | None = None):
    return _compare_app_class()(screen, theme=theme)


def make_compare_replay_app(runs: Sequence[MethodRun], *, speed: float = 1.0, paused: bool = False,
                            theme: str | None = None, title: str = "replay: compare", warnings: Sequence[str] = ()):
    """Recorded sessions side by side, raced at their recorded pace."""
    screen = CompareScreen([r.label for r in runs], runs=runs, speed=speed, paused=paused, title=title,
                           warnings=warnings)
    return make_compare_app(screen, theme=theme)


def launch_compare(prompt: str, methods: Sequence[str], opts: Any, *, record: Any = None,
                   theme: str | None = None) -> None:
    """`gammatune compare` in the TUI: load the pair in the screen's worker, measure, race."""
    from ...commands.compare import _load_pair, chat_prompt

    settings = opts.policy_settings(method=methods[0])
    sampling = opts.sampling(demo_defaults=opts.uses_demo)
    writer = RecordingWriter(record) if record else None
    job = CompareJob(methods, settings, sampling, chat_prompt(prompt, opts.raw), opts.max_new_tokens,
                     user_text=prompt, load=lambda progress: _load_pair(opts, progress), record=writer)
    screen = CompareScreen(methods, job=job, title=f"compare: {prompt[:60]}")
    make_compare_app(screen, theme=theme).run()
