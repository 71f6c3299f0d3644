"""The chat screen: transcript, live chart, stats, controls and step inspector.

It only sees events. A worker thread prepares the source (model loading, with
progress) and then iterates `source.events(prompt)`, posting ONE message per
event; handlers here log each event in the screen's `SessionLog` (steps,
sessions, their stats) and hand it to the widgets, which batch and redraw
themselves (the transcript at ~12 frames/s; the stats and inspector at once
for the first step, then at most four times a second; the chart a few times
a second). The controls start from the source's settings; a change is sent to
`source.request()`, applied by the source at the next step, and shows up as
`settings_changed` on that step's event. The screen's own state (`ready`,
`load_error`, `generating`, `pace`) is reactive: its watchers redraw the
loading line, the subtitle and the title. A source's `Notice` (e.g. old turns
left out of the model's context) becomes a notification and a line in the
transcript.

Below `NARROW_BELOW` columns (a laptop's 80×24) the transcript and the
panels (chart, statistics, controls) do not fit side by side: the screen
shows one at a time and F8 switches (`-narrow` / `-panels` classes, set by
Textual's breakpoints), and the footer keeps only the keys that matter most
(every key stays in F1 and the command palette). Below `SHORT_BELOW` rows
the step inspector keeps to its step line, so the transcript gets most of
the screen (`-short`; F7 shows the whole table). Tab goes prompt → method →
parameters → transcript on any width, showing the panels on the way when
they take turns with the transcript (`ChatActions.tab_chain`). The screen is
built in layers (`ChatBase` ← `ChatViews` ← `ChatActions` ← `ChatScreen`,
chat_base.py says what each holds).

A read-only source (a recording) plays automatically, one session after the
other: the prompt box is hidden and the controls are disabled. The replay
screen (`replay.py`) builds on this one with the player keys and the
recorded settings.
"""

from __future__ import annotations

from typing import Iterable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, Input, Label, Static

from ...engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ...render.change_marks import change_mark, sampling_in_force
from ...session.source import SystemPromptSource
from ..widgets.acceptance_chart import AcceptanceChart
from ..widgets.chat_footer import ChatFooter
from ..widgets.controls import ControlsPanel
from ..widgets.loading_line import LoadingLine
from ..widgets.stats_panel import StatsPanel
from ..widgets.prompt import (UNDECODABLE_NOTICE, PromptInput, clean_prompt, is_system_command,
                              system_command_text)
from ..widgets.step_inspector import StepInspector
from ..widgets.token_stream import TokenStream
from .chat_actions import ChatActions
from .chat_heading import write_turn_heading
from .chat_messages import LoadDone, LoadProgress, SourceEvent, SourceNotice, TurnDone, prepare_source, run_turn
from .help import CHAT_KEYS, help_bindings, welcome_text

NARROW_BELOW = 100
"""Below this many columns the transcript and the panels take turns (F8)."""
SHORT_BELOW = 34
"""Below this many rows the step inspector shows only its step line until F7 asks for the table."""


class SidePanel(VerticalScroll, can_focus=False):
    """Chart, statistics and controls. Not a focus stop itself: Tab goes straight to the controls in it."""


class ChatScreen(ChatActions):
    """See the module docstring. `app` must be a GammaTuneApp (for themes and the export folder).

    Its state, widgets and subtitle are declared in `ChatBase` (chat_base.py);
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

    # -- layout --------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="γ")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield LoadingLine(id="loading")
                yield Static(id="welcome")
                yield TokenStream(id="transcript")
                yield StepInspector(log=self.session_log, step_total=self.session_step_total, id="inspector")
                yield PromptInput(placeholder="Type a prompt, Enter sends · Esc stops · F1 help · Ctrl+P commands",
                                  id="prompt", disabled=self.read_only)
            with SidePanel(id="side"):
                yield Label("Panels · F8 back to the transcript", id="panels-hint")
                yield AcceptanceChart(id="chart")
                yield Label("Statistics", classes="section")
                yield StatsPanel(id="stats")
                yield Label("Controls" + (" (recorded, read-only)" if self.read_only else ""), classes="section")
                yield ControlsPanel(self.source.settings, self.source.sampling, read_only=self.read_only,
                                    id="controls")
        yield ChatFooter()

    def on_mount(self) -> None:
        self.set_class(self.read_only, "-read-only")
        self.pace = self.paced.pace if self.paced is not None else 0.0
        self.set_subtitle(self.source.title)
        self.follow_theme()
        if self.read_only:
            self.query_one("#welcome").display = False
            self.query_one("#prompt").display = False
            self.transcript.focus()
        else:
            self.query_one("#prompt", Input).focus()   # it then takes what was typed meanwhile (PromptInput)
        self.run_worker(lambda: prepare_source(self.source, self.post_message), thread=True, group="prepare",
                        exit_on_error=False)

    def apply_palette(self) -> None:
        gt = self.host.gamma_theme
        self.draw_welcome()
        self.transcript.set_palette(gt.roles, gt.background, gt.foreground)
        self.inspector.set_roles(gt.roles)
        self.chart.set_colours(gt.roles, gt.textual.accent or gt.textual.primary)

    def draw_welcome(self) -> None:
        demo = "demo" in str(self.source.title)
        self.query_one("#welcome", Static).update(welcome_text(self.host.gamma_theme.roles,
                                                               demo=demo, loaded=self.load_note))

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
            self.load_note = self.load_times()
            self.draw_welcome()
        if self.read_only:
            self.start_turn(None)
            return
        prompt = self.queued_prompt or self.initial_prompt
        self.queued_prompt = None
        if prompt:
            self.start_turn(prompt)

    def watch_pace(self, pace: float) -> None:
        self.show_pace()

    def watch_load_error(self, error: str) -> None:
        self.query_one(LoadingLine).error = error

    def watch_ready(self, ready: bool) -> None:
        self.query_one(LoadingLine).display = not ready
        if ready:
            self.set_subtitle(self.source.title)   # now with the load's time by stage

    # -- prompts and turns ------------------------------------------------------------
    @on(Input.Submitted, "#prompt")
    def _on_prompt(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            return
        command = is_system_command(event.value)
        if self.load_error and not command:
            self.notify(f"The models did not load: {self.load_error}", severity="error")
            return
        if self.generating and not command:
            self.notify("A generation is running: press Esc to stop it, then send.", severity="warning")
            return
        text, notices = self.query_one("#prompt", PromptInput).take_prompt()   # pastes whole, box emptied
        for notice in notices:
            self.notify(notice, title="Prompt", severity="warning", timeout=10)
        if command:
            self.set_system_prompt(system_command_text(text))
            return
        if not text.strip():
            return
        if not self.ready:
            self.queued_prompt = text
            self.notify("The models are still loading; your prompt starts as soon as they are ready.")
            return
        self.start_turn(text)

    def start_turn(self, prompt: str | None) -> None:
        """Run one session of the source in a worker (prompt None: a recording's next session)."""
        if prompt is not None:
            prompt, undecodable = clean_prompt(prompt)
            if undecodable:
                self.notify(UNDECODABLE_NOTICE, title="Prompt", severity="warning", timeout=10)
        self.turn_id += 1
        self.stop_requested = False
        self._sent = (prompt, len(self.sessions))   # given back to the box if the turn is refused before it starts
        self.generating = True
        self.run_worker(lambda: run_turn(self.source, prompt, self.turn_id, self.post_message, self.recorder),
                        thread=True, group="generate", exit_on_error=False)

    def on_turn_done(self, msg: TurnDone) -> None:
        if msg.turn_id != self.turn_id:
            return
        self.session_log.set_hindsight(msg.hindsight)
        if msg.error:
            self.transcript.add_line(f"[error: {msg.error}]", "info")
            back = self._give_prompt_back()
            self.notify(msg.error + (" Your prompt is back in the box." if back else ""), title="Generation failed",
                        severity="error", timeout=10)
        self.generating = False
        if self.read_only and self.source.has_next_session and not self.stop_requested:
            self.start_turn(None)

    def watch_generating(self, generating: bool) -> None:
        if generating:
            self.sub_title = "replaying…" if self.read_only else "generating…"   # a recording generates nothing
        else:   # how the last answer ended, and every view drawn to its end
            self.set_subtitle(self._idle_subtitle())
            self._flush_views()

    def _give_prompt_back(self) -> bool:
        """A prompt refused before its turn began (too long for the context…) goes back into an empty box."""
        prompt, sessions = self._sent
        box = self.query_one("#prompt", PromptInput)
        if prompt is None or self.read_only or len(self.sessions) != sessions or box.value:
            return False
        box.paste(prompt)   # a long one as its marker again
        return True

    # -- events ------------------------------------------------------------------------
    def on_source_event(self, msg: SourceEvent) -> None:
        if msg.turn_id != self.turn_id:
            return
        self.handle_event(msg.event)

    def on_source_notice(self, msg: SourceNotice) -> None:
        if msg.turn_id != self.turn_id:
            return
        self.notify(msg.notice.text, title=msg.notice.title, severity=msg.notice.severity, timeout=10)
        self._notes.append(msg.notice.text)   # a line in the transcript, under the turn's separator

    def handle_event(self, ev: Event) -> None:
        """Draw one event (public so replay can redraw a session from a prefix)."""
        if isinstance(ev, StepEvent):
            self._on_step(ev)
        elif isinstance(ev, SessionHeader):
            self._on_header(ev)
        elif isinstance(ev, SessionSummary):
            self._on_summary(ev)

    def _on_header(self, h: SessionHeader) -> None:
        self.query_one("#welcome").display = False
        self.subtitle.running_models = (h.target, h.draft)   # the subtitle names them (a drafter may have been switched)
        self.session_log.add(h, plain=self.source.plain_speed)   # plain decoding measured by a live source
        self.transcript.begin_session()   # where a replay stepping back rewinds them to
        self.chart.begin_session()
        notes, self._notes = self._notes, []
        system = self.source.system if isinstance(self.source, SystemPromptSource) and not self.read_only else ""
        self._system_shown = write_turn_heading(self.transcript, h, system=system, system_shown=self._system_shown,
                                                notes=notes)

    def _on_step(self, ev: StepEvent) -> None:
        log = self.session_log
        idx = len(log.steps)
        change = ""
        if ev.settings_changed:   # a mark where the new settings begin (kept by the HTML export too)
            prev = log.steps[idx - 1] if idx > log.current_start else None
            before = sampling_in_force(log.current.header, log.current_steps())
            change = change_mark(prev, ev, before)
            self.transcript.append(f" {change} ", "info", step=idx)
        log.add(ev)
        self.transcript.push_step(ev, idx)
        self.chart.add_step(ev.accepted, ev.gamma, len(ev.drafted), ev.settings_changed)
        if ev.settings_changed:
            self.controls.note_applied(change.strip("⟦⟧"))
        self.stats_panel.show(self.stats)
        self.inspector.step_added()

    def _on_summary(self, s: SessionSummary) -> None:
        self.session_log.add(s)
        self.stats_panel.show(self.stats, now=True)
        if s.stop_reason == "stopped":
            self.transcript.append(" ⏹", "info")
        elif s.stop_reason == "error" and s.error:
            self.transcript.add_line(f"[error: {s.error}]", "info")

    def redraw_session(self, events: Iterable[Event]) -> None:
        """Redraw the current session from `events` (its header first): a replay stepping back."""
        events = list(events)
        self.transcript.rewind_session()
        self.chart.rewind_session()
        self.session_log.drop_current()
        # the header re-enters the session (and its separator) exactly as before
        for ev in events:
            self.handle_event(ev)
        self._flush_views()

    def on_unmount(self) -> None:
        if self.generating:
            try:
                self.source.stop()
            except Exception:
                pass
        if self.recorder is not None:
            self.recorder.close()
        try:
            self.source.close()
        except Exception:  # shutting down: nothing useful to report
            pass
