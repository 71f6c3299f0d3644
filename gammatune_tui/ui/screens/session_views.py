"""The chat's views of its sessions: each event kept in the `SessionLog` and handed to the widgets that show it.

`SessionViews` owns the log (steps, sessions, their stats) and what the
transcript has said about the turns (the source's notes waiting for the next
turn's heading, the system prompt last shown). An event goes down to the
widgets, which batch and redraw themselves: a header opens a turn (its
heading, a new session in the chart and the log), a step goes to the
transcript, chart, statistics and inspector (a mark first where the settings
changed, which the controls then show), a summary closes it. The chat screen
owns one and routes its source's events to it; a replay stepping back
`rewind`s the session and draws it again.
"""

from __future__ import annotations

from textual.screen import Screen

from ...engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ...render.change_marks import change_mark, sampling_in_force
from ...session.session_log import SessionLog
from ...session.source import EventSource, SystemPromptSource
from ..widgets.acceptance_chart import AcceptanceChart
from ..widgets.controls import ControlsPanel
from ..widgets.stats_panel import StatsPanel
from ..widgets.step_inspector import StepInspector
from ..widgets.token_stream import TokenStream
from .chat_heading import write_turn_heading
from .chat_subtitle import Subtitle


class SessionViews:
    """The sessions shown on `screen` (see the module docstring); `subtitle` learns which models run."""

    def __init__(self, screen: Screen, source: EventSource, subtitle: Subtitle) -> None:
        self.screen = screen
        self.source = source
        self.subtitle = subtitle
        self.log = SessionLog()   # the sessions shown: steps, sessions, stats (session/session_log.py)
        self.notes: list[str] = []      # the source's notices, for the next turn's heading
        self.system_shown = ""          # the system prompt the transcript last said was in force

    @property
    def transcript(self) -> TokenStream:
        return self.screen.query_one("#transcript", TokenStream)

    @property
    def chart(self) -> AcceptanceChart:
        return self.screen.query_one("#chart", AcceptanceChart)

    @property
    def stats_panel(self) -> StatsPanel:
        return self.screen.query_one("#stats", StatsPanel)

    @property
    def inspector(self) -> StepInspector:
        return self.screen.query_one("#inspector", StepInspector)

    def draw(self, ev: Event) -> None:
        """Keep and show one event."""
        if isinstance(ev, StepEvent):
            self._step(ev)
        elif isinstance(ev, SessionHeader):
            self._header(ev)
        elif isinstance(ev, SessionSummary):
            self._summary(ev)

    def flush(self) -> None:
        """Every view drawn up to the last event at once (a turn has ended, or a replay was rewound)."""
        self.transcript.flush()
        self.stats_panel.show(self.log.current, now=True)
        self.inspector.catch_up()
        self.chart.refresh()

    def _header(self, h: SessionHeader) -> None:
        self.screen.query_one("#welcome").display = False
        self.subtitle.running_models = (h.target, h.draft)   # the subtitle names them (a drafter may have been switched)
        self.log.add(h, plain=self.source.plain_speed)   # plain decoding measured by a live source
        self.transcript.begin_session()   # where a replay stepping back rewinds them to
        self.chart.begin_session()
        notes, self.notes = self.notes, []
        read_only = bool(self.source.read_only)
        system = self.source.system if isinstance(self.source, SystemPromptSource) and not read_only else ""
        self.system_shown = write_turn_heading(self.transcript, h, system=system, system_shown=self.system_shown,
                                               notes=notes)

    def _step(self, ev: StepEvent) -> None:
        log = self.log
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
            self.screen.query_one("#controls", ControlsPanel).note_applied(change.strip("⟦⟧"))
        self.stats_panel.show(log.current)
        self.inspector.step_added()

    def _summary(self, s: SessionSummary) -> None:
        self.log.add(s)
        self.stats_panel.show(self.log.current, now=True)
        if s.stop_reason == "stopped":
            self.transcript.append(" ⏹", "info")
        elif s.stop_reason == "error" and s.error:
            self.transcript.add_line(f"[error: {s.error}]", "info")

    def rewind(self) -> None:
        """Drop the current session from the log and its views (a replay stepping back redraws it)."""
        self.transcript.rewind_session()
        self.chart.rewind_session()
        self.log.drop_current()
