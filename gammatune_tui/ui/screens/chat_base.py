"""What the chat screen is made of, declared in one place: its state, its widgets and its subtitle.

The chat screen is built in layers, each a class over the one below, so what
a layer needs from the screen is this class's declared attributes, not a
list in a docstring: `ChatBase` (here: the source, the reactive state, the
log, the widgets, the subtitle) ← `ChatViews` (chat_views.py: step
selection and what goes to the source: controls, Esc, pace, drafter, system
prompt) ← `ChatActions` (chat_actions.py: the keys that arrange the screen,
export, copy, the palette) ← `ChatScreen` (chat.py: layout, loading, turns
and events) ← `ReplayChatScreen`. State that belongs to one widget lives in
that widget (the inspector's `follow`, the transcript's `shade` and
`selected_step`, the footer's keys left out, the loading line's stage).
"""

from __future__ import annotations

from textual.reactive import var

from ...engine.events import StepEvent
from ...render.safe_text import one_line
from ...session.pace import pace_label
from ...session.recording import RecordingWriter
from ...session.session_log import SessionLog
from ...session.source import EventSource
from ...session.stats import RunningStats
from ..widgets.acceptance_chart import AcceptanceChart
from ..widgets.controls import ControlsPanel
from ..widgets.stats_panel import StatsPanel
from ..widgets.step_inspector import StepInspector
from ..widgets.token_stream import TokenStream
from .base import GammaScreen
from .chat_subtitle import Subtitle, idle_subtitle, load_times


def _child(selector: str, kind: type) -> property:
    """A read-only property for the one widget matching `selector` (looked up on each use)."""
    return property(lambda self: self.query_one(selector, kind), doc=f"The {selector} widget.")


class ChatBase(GammaScreen):
    """The chat screen's declared state and widgets (see the module docstring).

    `recorder`, if set, gets every event of every turn; the screen closes it,
    and the source, when it goes.
    """

    # the screen's state; the watchers in chat.py redraw what shows it (set them, never draw by hand)
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
        self.recorder = recorder
        self.initial_prompt = initial_prompt
        self.queued_prompt: str | None = None
        self.turn_id = 0
        self.session_log = SessionLog()   # the sessions shown: steps, sessions, stats (session/session_log.py)
        self.stop_requested = False
        self.subtitle = Subtitle()
        self._sent: tuple[str | None, int] = (None, 0)   # the last prompt sent and the sessions shown before it
        self._notes: list[str] = []      # the source's notices, for the next turn's heading
        self._system_shown = ""          # the system prompt the transcript last said was in force
        self.load_note = ""              # the load's stages, where the subtitle has no room: under the welcome

    transcript = _child("#transcript", TokenStream)
    chart = _child("#chart", AcceptanceChart)
    stats_panel = _child("#stats", StatsPanel)
    inspector = _child("#inspector", StepInspector)
    controls = _child("#controls", ControlsPanel)

    # -- the log's views -------------------------------------------------------------------
    @property
    def steps(self) -> list[StepEvent]:
        """Every step shown, across sessions (the index is the step's number in the transcript)."""
        return self.session_log.steps

    @property
    def sessions(self) -> list[RunningStats]:
        return self.session_log.sessions

    @property
    def stats(self) -> RunningStats:
        """The numbers of the session shown last."""
        return self.session_log.current

    def session_step_total(self, session: int, shown: int) -> int:
        """Steps in session `session` for the inspector's "step i/n": those shown (a replay knows them all)."""
        return shown

    def _flush_views(self) -> None:
        """Every view drawn up to the last event at once (a turn has ended, or a replay was rewound)."""
        self.transcript.flush()
        self.stats_panel.show(self.stats, now=True)
        self.inspector.catch_up()
        self.chart.refresh()

    # -- the subtitle (the header draws the screen's `sub_title`) ------------------------------------
    def set_subtitle(self, text: str) -> None:
        """Show `text` as the subtitle, fitted to the width (kept whole for a resize)."""
        self.subtitle.full = one_line(text)
        self._fit_subtitle()

    def _fit_subtitle(self) -> None:
        self.sub_title = self.subtitle.fit(self.size.width or self.app.size.width, self.title or "")

    def _idle_subtitle(self) -> str:
        """The subtitle between turns: the source's title, and how the last answer ended."""
        return idle_subtitle(self.subtitle.source_title(self.source.title), self.stats.summary)

    def show_pace(self) -> None:
        """The title: the app's name, and the pace (the screen's `pace`) while one holds a live source back."""
        pace = self.pace
        self.title = f"gammatune · pace {pace_label(pace)}" if pace else "gammatune"
        if self.subtitle.showing(self.sub_title or ""):   # a longer title: refit
            self._fit_subtitle()

    def on_resize(self) -> None:
        if self.subtitle.showing(self.sub_title or ""):   # not "generating…"
            self._fit_subtitle()

    def load_times(self) -> str:
        """'loaded in 9.8 s: imports 4.1 · … s' from the source's title ('' when it names no stages)."""
        return load_times(self.source.title)

    def action_show_load_times(self) -> None:
        text = self.load_times()
        self.notify(text or "No load times: this source loaded no models.", title="Load times", timeout=10)
