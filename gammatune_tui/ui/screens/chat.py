"""The chat screen: transcript, live chart, stats, controls and step inspector, composed of widgets that own their parts.

It only sees events: `Turns` (chat_messages.py) runs the source's load and
turns in worker threads, which post ONE message per event. The handlers here
set the screen's reactive state (`ready`, `load_error`, `generating`, `pace`;
watchers draw the loading line, subtitle and title, and set the prompt box's
refusals down) and route each event to `SessionViews` (session_views.py: the
`SessionLog`, and the widgets that redraw themselves from it). What widgets
post up (the prompt's `Sent`, the controls' `Changed`) and F9, the drafters
and `/system` go to the source through `SourceRequests` (chat_requests.py);
F3 and the copy keys to `ChatExport` (chat_export.py). The view keys flip
the widgets' own state, and `ChatLayout` (widgets/chat_layout.py) owns how
the `TranscriptColumn` and the `SidePanel` share the screen (one at a time
below `NARROW_BELOW` columns, F8 switching) and Tab's order. A recording
plays by itself, prompt hidden, controls disabled; `replay.py` adds its keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from textual.actions import SkipAction
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Header, Input

from ...engine.events import Event, StepEvent
from ...render.safe_text import one_line
from ...session.pace import pace_label
from ...session.recording import RecordingWriter
from ...session.session_log import SessionLog
from ...session.source import EventSource
from ...session.stats import RunningStats
from ..widgets.acceptance_chart import AcceptanceChart
from ..widgets.chat_footer import ChatFooter
from ..widgets.chat_layout import ChatLayout, SidePanel
from ..widgets.controls import ControlsPanel
from ..widgets.loading_line import LoadingLine
from ..widgets.prompt import UNDECODABLE_NOTICE, PromptInput, clean_prompt
from ..widgets.stats_panel import StatsPanel
from ..widgets.step_inspector import StepInspector
from ..widgets.token_stream import TokenStream
from ..widgets.transcript_column import TranscriptColumn
from .base import Child, GammaScreen
from .chat_export import ChatExport
from .chat_messages import LoadDone, LoadProgress, SourceEvent, SourceNotice, TurnDone, Turns
from .chat_requests import SourceRequests
from .chat_subtitle import Subtitle, idle_subtitle, load_times
from .help import CHAT_KEYS, help_bindings, typing_in_field, welcome_text
from .session_views import SessionViews

NARROW_BELOW = 100
"""Below this many columns the transcript and the panels take turns (F8)."""
SHORT_BELOW = 34
"""Below this many rows the step inspector shows only its step line until F7 asks for the table."""

__all__ = ["ChatScreen", "SidePanel", "NARROW_BELOW", "SHORT_BELOW"]


class ChatScreen(GammaScreen):
    """See the module docstring. `app` must be a GammaTuneApp (for themes and the export folder).

    `recorder`, if set, gets every event of every turn; the screen closes it,
    and the source, when it goes.
    """

    HELP_KEYS = CHAT_KEYS
    HELP_TITLE = "chat"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]
    BINDINGS = [
        Binding("escape", "stop", "Stop"),
        *help_bindings(),
        Binding("f3", "export_html", "HTML"),
        Binding("ctrl+y", "copy_answer", "Copy answer", show=False),
        Binding("ctrl+t", "copy_transcript", "Copy all", show=False),
        Binding("f4", "toggle_shade", "Shade"),
        Binding("f5", "toggle_history", "History"),
        Binding("f6", "app.next_theme", "Theme"),
        Binding("f7", "toggle_inspector", "Inspect"),
        Binding("f8", "toggle_panels", "Panels"),
        Binding("f9", "pace(1)", "Pace"),
        Binding("shift+f9", "pace(-1)", "Faster", show=False),
        # priority, so Tab moves the focus in turn with the keys typed after it (a non-priority Tab ran only once
        # it had bubbled back to the app, and a value typed quickly after it went to the field left behind)
        Binding("tab", "app.focus_next", "Next", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", "Previous", show=False, priority=True),
        # priority, so they work from the prompt; while a field holds text they stay its word moves
        Binding("ctrl+left", "step_select(-1)", "Prev step", show=False, priority=True),
        Binding("ctrl+right", "step_select(1)", "Next step", show=False, priority=True),
    ]

    # the screen's state; the watchers below redraw what shows it (set them, never draw by hand)
    ready: var[bool] = var(False, init=False)
    """The source is prepared: a prompt starts at once (before, it waits as `queued_prompt`)."""
    load_error: var[str] = var("", init=False)
    """Why the source could not be prepared ('' while it can): the loading line says it."""
    generating: var[bool] = var(False, always_update=True, init=False)
    """A turn's worker is running: the subtitle says so; between turns it says how the last one ended."""
    pace: var[float] = var(0.0, always_update=True, init=False)
    """The steps a second a live source is held to (0: full speed): the title shows it (F9 sets it)."""

    def __init__(self, source: EventSource, *, recorder: RecordingWriter | None = None,
                 initial_prompt: str | None = None, name: str | None = None) -> None:
        super().__init__(name=name)
        self.source = source
        self.read_only = bool(source.read_only)
        self.takes_early_keys = not self.read_only   # what is typed while the screen mounts goes to the prompt
        self.initial_prompt = initial_prompt
        self.queued_prompt: str | None = None
        self.turns = Turns(self, source, recorder)              # its workers: the load, then one turn at a time
        self.subtitle = Subtitle()
        self.views = SessionViews(self, source, self.subtitle)   # the log and the widgets that show it
        self.requests = SourceRequests(self, source, self._show_pace)   # controls, pace, drafter, system prompt
        self.export = ChatExport(self, self.views.log, source)   # F3 and the copy keys
        self.load_note = ""              # the load's stages, where the subtitle has no room: under the welcome

    # -- the widgets, and the log they show ------------------------------------------------
    columns = Child("#main", ChatLayout)
    column = Child("#left", TranscriptColumn)
    transcript = Child("#transcript", TokenStream)
    chart = Child("#chart", AcceptanceChart)
    stats_panel = Child("#stats", StatsPanel)
    inspector = Child("#inspector", StepInspector)
    controls = Child("#controls", ControlsPanel)

    @property
    def session_log(self) -> SessionLog:
        return self.views.log

    @property
    def steps(self) -> list[StepEvent]:
        """Every step shown, across sessions (the index is the step's number in the transcript)."""
        return self.views.log.steps

    @property
    def sessions(self) -> list[RunningStats]:
        return self.views.log.sessions

    @property
    def stats(self) -> RunningStats:
        """The numbers of the session shown last."""
        return self.views.log.current

    def session_step_total(self, session: int, shown: int) -> int:
        """Steps in session `session` for the inspector's "step i/n": those shown (a replay knows them all)."""
        return shown

    # -- layout --------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="γ")
        with ChatLayout(id="main", read_only=self.read_only):
            yield TranscriptColumn(self.views.log, step_total=self.session_step_total, read_only=self.read_only,
                                   id="left")
            yield SidePanel(self.source.settings, self.source.sampling, read_only=self.read_only, id="side")
        yield ChatFooter()

    def on_mount(self) -> None:
        self.set_class(self.read_only, "-read-only")
        paced = self.requests.paced
        self.pace = paced.pace if paced is not None else 0.0
        self.set_subtitle(self.source.title)
        self.follow_theme()
        if self.read_only:
            self.query_one("#welcome").display = False
            self.query_one("#prompt").display = False
            self.transcript.focus()
        else:
            self.query_one("#prompt", Input).focus()   # it then takes what was typed meanwhile (PromptInput)
        self.turns.prepare()

    def apply_palette(self) -> None:
        gt = self.host.gamma_theme
        self.draw_welcome()
        self.column.set_roles(gt.roles, gt.background, gt.foreground)
        self.chart.set_colours(gt.roles, gt.textual.accent or gt.textual.primary)

    def draw_welcome(self) -> None:
        demo = "demo" in str(self.source.title)
        self.column.show_welcome(welcome_text(self.host.gamma_theme.roles, demo=demo, loaded=self.load_note))

    # -- the title and subtitle (the header draws the screen's `title` and `sub_title`) -------------
    def set_subtitle(self, text: str) -> None:
        """Show `text` as the subtitle, fitted to the width (kept whole for a resize)."""
        self.subtitle.full = one_line(text)
        self._fit_subtitle()

    def _fit_subtitle(self) -> None:
        self.sub_title = self.subtitle.fit(self.size.width or self.app.size.width, self.title or "")

    def on_resize(self) -> None:
        if self.subtitle.showing(self.sub_title or ""):   # not "generating…"
            self._fit_subtitle()

    def watch_pace(self, pace: float) -> None:
        """The title: the app's name, and the pace while one holds a live source back."""
        self.title = f"gammatune · pace {pace_label(pace)}" if pace else "gammatune"
        if self.subtitle.showing(self.sub_title or ""):   # a longer title: refit
            self._fit_subtitle()

    # -- loading ---------------------------------------------------------------------
    def on_load_progress(self, msg: LoadProgress) -> None:
        self.query_one(LoadingLine).show_progress(msg.stage, msg.fraction)

    def on_load_done(self, msg: LoadDone) -> None:
        if msg.error:
            self.load_error = msg.error
            self.notify(msg.error, title="Loading failed", severity="error", timeout=10)
            return
        self.ready = True
        if self.subtitle.is_cut:   # too narrow for the stages (80 columns): under the welcome, which a notice covered
            self.load_note = load_times(self.source.title)   # 'loaded in 9.8 s: imports 4.1 · … s'
            self.draw_welcome()
        if self.read_only:
            self.start_turn(None)
            return
        prompt = self.queued_prompt or self.initial_prompt
        self.queued_prompt = None
        if prompt:
            self.start_turn(prompt)

    def watch_load_error(self, error: str) -> None:
        self.query_one(LoadingLine).error = error
        self.query_one(PromptInput).load_error = error

    def watch_ready(self, ready: bool) -> None:
        self.query_one(LoadingLine).display = not ready
        if ready:
            self.set_subtitle(self.source.title)   # now with the load's time by stage

    # -- prompts and turns ------------------------------------------------------------
    def on_prompt_input_sent(self, msg: PromptInput.Sent) -> None:
        if msg.system:
            self.requests.set_system_prompt(msg.text, self.ready)
        elif not self.ready:
            self.queued_prompt = msg.text
            self.notify("The models are still loading; your prompt starts as soon as they are ready.")
        else:
            self.start_turn(msg.text)

    def start_turn(self, prompt: str | None) -> None:
        """Run one session of the source in a worker (prompt None: a recording's next session)."""
        if prompt is not None:
            prompt, undecodable = clean_prompt(prompt)
            if undecodable:
                self.notify(UNDECODABLE_NOTICE, title="Prompt", severity="warning", timeout=10)
        self.turns.start(prompt, len(self.sessions))
        self.generating = True

    def on_turn_done(self, msg: TurnDone) -> None:
        if not self.turns.current(msg.turn_id):
            return
        self.views.log.set_hindsight(msg.hindsight)
        if msg.error:
            self.transcript.add_line(f"[error: {msg.error}]", "info")
            back = self._give_prompt_back()
            self.notify(msg.error + (" Your prompt is back in the box." if back else ""), title="Generation failed",
                        severity="error", timeout=10)
        self.generating = False
        if self.read_only and self.source.has_next_session and not self.turns.stop_requested:
            self.start_turn(None)

    def watch_generating(self, generating: bool) -> None:
        self.query_one(PromptInput).busy = generating
        if generating:
            self.sub_title = "replaying…" if self.read_only else "generating…"   # a recording generates nothing
        else:   # how the last answer ended, and every view drawn to its end
            self.set_subtitle(idle_subtitle(self.subtitle.source_title(self.source.title), self.stats.summary))
            self.views.flush()

    def _give_prompt_back(self) -> bool:
        """A prompt refused before its turn began (too long for the context…) goes back into an empty box."""
        prompt = self.turns.refused(len(self.sessions))
        return prompt is not None and not self.read_only and self.column.give_back(prompt)

    # -- events, to the views ------------------------------------------------------------
    def on_source_event(self, msg: SourceEvent) -> None:
        if self.turns.current(msg.turn_id):
            self.handle_event(msg.event)

    def on_source_notice(self, msg: SourceNotice) -> None:
        if not self.turns.current(msg.turn_id):
            return
        self.notify(msg.notice.text, title=msg.notice.title, severity=msg.notice.severity, timeout=10)
        self.views.notes.append(msg.notice.text)   # a line in the transcript, under the turn's separator

    def handle_event(self, ev: Event) -> None:
        """Draw one event (public so replay can redraw a session from a prefix)."""
        self.views.draw(ev)

    def redraw_session(self, events: Iterable[Event]) -> None:
        """Redraw the current session from `events` (its header first): a replay stepping back."""
        self.views.rewind()
        for ev in events:   # the header re-enters the session (and its separator) exactly as before
            self.handle_event(ev)
        self.views.flush()

    # -- from the widgets, to the source -----------------------------------------------------
    def on_controls_panel_changed(self, msg: ControlsPanel.Changed) -> None:
        self.requests.controls_changed(msg, self.generating)

    def select_step(self, index: int | None) -> None:
        """Pin the inspector on global step `index` (None: follow the latest step again)."""
        self.column.select_step(index)

    def set_method(self, method: str) -> None:
        """Switch policy (the palette's "Method:" entries)."""
        self.controls.choose_method(method)

    def set_drafter(self, name: str) -> None:
        """Between turns: the next answer drafts with `name`; the subtitle names each answer's drafter from now on."""
        if self.requests.set_drafter(name):
            self.subtitle.drafter_switched = True

    def _show_pace(self, pace: float) -> None:
        self.pace = pace   # the title follows (watch_pace)

    # -- the keys (BINDINGS) and the palette -------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "pace":
            return self.requests.paced is not None
        return True

    def action_stop(self) -> None:
        if self.generating:
            self.turns.stop()
            self.sub_title = "stopping…"
        elif not self.column.following:
            self.select_step(None)

    def action_step_select(self, delta: int) -> None:
        if typing_in_field(self.app):
            raise SkipAction()   # Ctrl+←/→ move by word in a field that holds text
        self.column.step_by(delta)

    def action_pace(self, direction: int = 1) -> None:
        self.requests.step_pace(direction)

    def action_export_html(self) -> Path | None:
        return self.export.export_html()

    def action_copy_answer(self) -> str:
        return self.export.copy_answer()

    def action_copy_transcript(self) -> str:
        return self.export.copy_transcript()

    def action_show_load_times(self) -> None:
        text = load_times(self.source.title)
        self.notify(text or "No load times: this source loaded no models.", title="Load times", timeout=10)

    def action_toggle_shade(self) -> None:
        self.transcript.toggle_shade()

    def action_toggle_history(self) -> None:
        self.chart.full_history = not self.chart.full_history

    def action_toggle_inspector(self) -> None:
        """Tall screens: shown / hidden. Short ones: step line → whole table → hidden → step line."""
        self.inspector.toggle_shown(short=self.has_class("-short"))

    def action_toggle_panels(self) -> None:
        self.columns.toggle_panels()

    def focus_next(self, selector: str | type[Widget] = "*") -> Widget | None:
        return self.columns.tab(1) if selector == "*" else super().focus_next(selector)

    def focus_previous(self, selector: str | type[Widget] = "*") -> Widget | None:
        return self.columns.tab(-1) if selector == "*" else super().focus_previous(selector)

    def system_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette (the app adds help, themes and quit)."""
        yield SystemCommand("Stop generation", "End the running generation at the next step (Esc)", self.action_stop)
        yield from self.export.commands()
        yield SystemCommand("Show load times", "Where loading the models spent its time, stage by stage",
                            self.action_show_load_times)
        yield SystemCommand("Toggle confidence shading", "Shade draft tokens by the draft's confidence (F4)",
                            self.action_toggle_shade)
        yield SystemCommand("Toggle chart history", "Last steps or the whole session in the chart (F5)",
                            self.action_toggle_history)
        yield SystemCommand("Toggle step inspector", "Show or hide the step inspector (F7)",
                            self.action_toggle_inspector)
        yield from self.columns.panel_commands()
        yield SystemCommand("Inspect latest step", "Let the inspector follow the newest step again",
                            lambda: self.select_step(None))
        yield from self.columns.focus_commands()
        yield from self.requests.commands(self.set_drafter, self.set_method)

    def on_unmount(self) -> None:
        self.turns.close(running=self.generating)
