"""The replay screen: the chat screen around a `ReplaySource`, with the player keys and the recording's header.

What only a replay needs, on top of the chat screen: the player keys (space,
`.`/`,`, `+`/`-`, `e`) and their palette entries, a header line with the
recording's models, device, settings and versions and the player's state,
the controls showing the settings the recording says were in force, a guard
that drops events overtaken by a step back (a step may be in flight to the
UI when the user rewinds), and resuming after a step back once the session
had already ended.
"""

from __future__ import annotations

from typing import Any, Iterable

from rich.text import Text
from textual.app import SystemCommand
from textual.binding import Binding
from textual.widgets import Static

from ...engine.events import Event, SessionHeader, StepEvent
from ...render.safe_text import one_line
from ...render.session_info import header_lines
from ...session.replay import ReplaySource, recorded_settings
from .chat import ChatScreen
from .chat_messages import SourceEvent
from .help import REPLAY_KEYS


WIDE_HEADER = 120  # columns from which the header also shows load times and versions


class ReplayChatScreen(ChatScreen):
    """The chat screen for a recording: player keys, header line, recorded settings and rewind-safe drawing."""

    BINDINGS = [
        Binding("space", "toggle_pause", "Pause"),
        Binding("full_stop", "step_forward", "Step →", show=False),
        Binding("comma", "step_back", "Step ←", show=False),
        Binding("plus", "faster", "Faster", show=False),
        Binding("minus", "slower", "Slower", show=False),
        Binding("e", "jump_end", "To end", show=False),
    ]

    DEFAULT_CSS = """
    ReplayChatScreen #replay-info {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    """

    HELP_KEYS = REPLAY_KEYS
    HELP_TITLE = "replay"

    def __init__(self, source: ReplaySource, **kwargs: Any) -> None:
        super().__init__(source, **kwargs)
        self.player: ReplaySource = source
        self._drawn = 0            # events of the current session drawn so far (header included)
        self._recorded: SessionHeader | None = None

    def on_mount(self) -> None:
        info = Static(Text(""), id="replay-info")
        self.query_one("#left").mount(info, before=self.query_one("#transcript"))
        self.set_interval(0.25, self._update_info)

    # -- drawing, guarded against events overtaken by a step back --------------------------
    def on_source_event(self, msg: SourceEvent) -> None:
        if not self.turns.current(msg.turn_id):
            return
        msg.prevent_default()
        ev = msg.event
        current = self.player.current_events
        if isinstance(ev, SessionHeader):
            self._drawn = 0
            self._recorded = ev
        elif not (self._drawn < len(current) and current[self._drawn] is ev):
            return  # a stale event: the player was rewound after it was sent
        self._drawn += 1
        self.handle_event(ev)
        if isinstance(ev, SessionHeader):
            self._update_info()

    def handle_event(self, ev: Event) -> None:
        super().handle_event(ev)
        # the controls show what the recording says was in force (its values, when they are valid)
        if isinstance(ev, SessionHeader):
            st, sc = recorded_settings(ev.method, ev.gamma0, ev.params, ev.sampling)
        elif isinstance(ev, StepEvent) and ev.settings_changed:
            st, sc = recorded_settings(ev.method, None, ev.params, None, self.controls.settings.gamma0)
        else:
            return
        if st is not None:
            self.controls.show_settings(st, sc)

    def redraw_session(self, events: Iterable[Event]) -> None:
        events = list(events)
        super().redraw_session(events)
        self._drawn = len(events)
        self._update_info()

    def session_step_total(self, session: int, shown: int) -> int:
        """The recording knows how many steps the playing session has: the inspector counts as the player does."""
        if session == len(self.sessions) - 1:
            return max(shown, sum(1 for e in self.player.current_events if isinstance(e, StepEvent)))
        return shown

    # -- the player keys ----------------------------------------------------------------
    def action_toggle_pause(self) -> None:
        p = self.player
        self.sub_title = "paused" if p.toggle_pause() else "playing"
        if not p.paused and not self.generating and (not p.session_finished or p.has_next_session):
            self.start_turn(None)   # after Esc (or the end of a rewound session): play on
        self._update_info()

    def action_step_forward(self) -> None:
        self.player.step_forward(1)
        if not self.generating and not self.player.session_finished:
            self.start_turn(None)

    def action_step_back(self) -> None:
        shown = self.player.step_back(1)
        if shown:
            self.redraw_session(shown)
            self.sub_title = "paused"
        if not self.generating and not self.player.session_finished:
            self.start_turn(None)   # the session had ended: play on from the rewound step when resumed

    def action_faster(self) -> None:
        self._speed(2.0)

    def action_slower(self) -> None:
        self._speed(0.5)

    def _speed(self, factor: float) -> None:
        self.notify(f"speed ×{self.player.change_speed(factor):g}", timeout=1)
        self._update_info()

    def action_jump_end(self) -> None:
        self.player.jump_to_end()

    def system_commands(self) -> Iterable[SystemCommand]:
        yield from super().system_commands()
        yield SystemCommand("Pause / resume replay", "Space", self.action_toggle_pause)
        yield SystemCommand("Step forward", "Next recorded step (.)", self.action_step_forward)
        yield SystemCommand("Step back", "Previous recorded step (,)", self.action_step_back)
        yield SystemCommand("Jump to end", "Play the rest at once (e)", self.action_jump_end)
        yield SystemCommand("Recording details", "Models, device, load times, settings and versions of the session",
                            self.action_recording_details)

    def action_recording_details(self) -> None:
        if self._recorded is None:
            self.notify("No session has started playing yet.", severity="warning", timeout=3)
            return
        self.notify(header_lines(self._recorded).plain, title="Recording", timeout=15)

    # -- the header line ----------------------------------------------------------------
    def _update_info(self) -> None:
        try:
            info = self.query_one("#replay-info", Static)
        except Exception:
            return
        t = Text()
        p = self.player
        state = "⏸ paused" if p.paused else ("⏹ end" if p.at_end else "▶ playing")
        t.append(f"{state}", style="bold")
        steps = sum(1 for e in p.current_events if e.type == "step")
        shown_steps = max(0, min(self._drawn - 1, steps))
        sessions = len(p.sessions) if p.recording is not None else 0
        t.append(f"  ×{p.speed:g}  step {shown_steps}/{steps}")
        if sessions > 1:
            t.append(f"  session {p.session_index + 1}/{sessions}")
        t.append("   space pause · . step · , back · +/- speed · e end", style="dim")
        if self._recorded is not None:
            t.append("\n")
            t.append_text(header_lines(self._recorded, full=self.size.width >= WIDE_HEADER))
        if p.warning:
            t.append("\n")
            t.append(one_line(p.warning), style="bold yellow")
        info.update(t)
