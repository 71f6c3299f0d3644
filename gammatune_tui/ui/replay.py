"""Replay in the TUI: the chat screen around a `ReplaySource`, plus a recording's header.

The chat screen already plays read-only sources and binds the player keys
(space, `.`/`,`, `+`/`-`, `e`). This subclass adds what only a replay needs:
a header line with the recording's models, device, settings and versions and
the player's state, a guard that drops events overtaken by a step back
(a step may be in flight to the UI when the user rewinds), and resuming
after a step back once the session had already ended.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from rich.text import Text
from textual.widgets import Static

from ..engine.events import Event, SessionHeader
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..errors import GammatuneError
from ..session.compare import MethodRun
from ..session.recording import Recording
from ..session.replay import ReplaySource
from .app import GammaTuneApp
from .safe_text import printable
from .screens.chat import ChatScreen, SourceEvent


def _one_line(s: Any) -> str:
    return printable(str(s), keep_newlines=False)


def header_lines(h: SessionHeader) -> Text:
    """Models, device, settings and versions of a recorded session (all text escaped)."""
    t = Text()
    t.append("models ", style="dim")
    t.append(_one_line(f"{h.target} ← {h.draft}"))
    if h.demo:
        t.append(" (demo pair)", style="dim")
    t.append("  device ", style="dim")
    t.append(_one_line(f"{h.device} {h.dtype}"))
    t.append("\nsettings ", style="dim")
    params = " ".join(f"{k}={v}" for k, v in h.params.items()
                      if v is not None and k != "gamma0" and not (k == "dynamic_tau" and v is False))
    t.append(_one_line(f"{h.method} γ0={h.gamma0} {params}"))
    samp = h.sampling
    temp = samp.get("temperature", 0)
    t.append("  sampling ", style="dim")
    t.append(_one_line("greedy" if temp == 0 else f"T={temp} top-k={samp.get('top_k', 0)} top-p={samp.get('top_p', 1.0)}"))
    t.append(_one_line(f" seed={h.seed} max={h.max_new_tokens}"))
    if h.versions:
        t.append("\nversions ", style="dim")
        t.append(_one_line(" ".join(f"{k} {v}" for k, v in h.versions.items())))
    return t


def settings_of(h: SessionHeader) -> tuple[PolicySettings, SamplingConfig]:
    """The recorded settings for the (read-only) controls; defaults where the file is odd."""
    try:
        keep = {k: h.params[k] for k in ("eta", "delta", "tau", "gamma_min", "gamma_max") if h.params.get(k) is not None}
        settings = PolicySettings.build(h.method, h.gamma0, **keep)
    except (GammatuneError, ValueError, TypeError):
        settings = PolicySettings()
    try:
        s = h.sampling
        sampling = SamplingConfig(temperature=float(s.get("temperature", 0.0)), top_k=int(s.get("top_k", 0)),
                                  top_p=float(s.get("top_p", 1.0)), seed=s.get("seed") if isinstance(s.get("seed"), int) else None)
    except (GammatuneError, ValueError, TypeError):
        sampling = SamplingConfig()
    return settings, sampling


class ReplayChatScreen(ChatScreen):
    """The chat screen for a recording: header line, player status and rewind-safe drawing."""

    DEFAULT_CSS = """
    ReplayChatScreen #replay-info {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, source: ReplaySource, *args: Any, **kwargs: Any) -> None:
        super().__init__(source, *args, **kwargs)
        self.player: ReplaySource = source
        self._drawn = 0            # events of the current session drawn so far (header included)
        self._recorded: SessionHeader | None = None

    def on_mount(self) -> None:
        info = Static(Text(""), id="replay-info")
        self.query_one("#left").mount(info, before=self.query_one("#transcript"))
        self.set_interval(0.25, self._update_info)

    # -- drawing, guarded against events overtaken by a step back --------------------------
    def on_source_event(self, msg: SourceEvent) -> None:
        if msg.turn_id != self.turn_id:
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

    def redraw_session(self, events: Iterable[Event]) -> None:
        events = list(events)
        super().redraw_session(events)
        self._drawn = len(events)
        self._update_info()

    def action_step_back(self) -> None:
        super().action_step_back()
        if not self.generating and not self.player.session_finished:
            self.start_turn(None)   # the session had ended: play on from the rewound step when resumed

    def action_step_forward(self) -> None:
        super().action_step_forward()
        if not self.generating and not self.player.session_finished:
            self.start_turn(None)

    def action_toggle_pause(self) -> None:
        super().action_toggle_pause()
        p = self.player
        if not p.paused and not self.generating and (not p.session_finished or p.has_next_session):
            self.start_turn(None)   # after Esc (or the end of a rewound session): play on
        self._update_info()

    def _speed(self, factor: float) -> None:
        super()._speed(factor)
        self._update_info()

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
            t.append_text(header_lines(self._recorded))
        if p.warning:
            t.append("\n")
            t.append(_one_line(p.warning), style="bold yellow")
        info.update(t)


class ReplayApp(GammaTuneApp):
    """GammaTuneApp whose chat screen is a ReplayChatScreen."""

    def __init__(self, source: ReplaySource, **kwargs: Any) -> None:
        super().__init__(source, **kwargs)
        self.chat = ReplayChatScreen(source, kwargs.get("settings"), kwargs.get("sampling"),
                                     export_dir=self.export_dir)


def make_replay_app(recording: Recording, *, speed: float = 1.0, paused: bool = False,
                    theme: str | None = None, **kwargs: Any) -> ReplayApp:
    source = ReplaySource(recording, speed=speed, paused=paused)
    settings, sampling = settings_of(recording.sessions[0].header)
    return ReplayApp(source, settings=settings, sampling=sampling, theme=theme, **kwargs)


def launch_replay(recordings: Sequence[Recording], runs: Sequence[MethodRun], compare: bool, *,
                  speed: float = 1.0, paused: bool = False, theme: str | None = None) -> None:
    """`gammatune replay` in the TUI: one recording in the chat screen, several side by side."""
    if compare:
        from .screens.compare import make_compare_replay_app

        names = ", ".join(r.path.name for r in recordings)
        make_compare_replay_app(list(runs), speed=speed, paused=paused, theme=theme, title=f"replay: {names}",
                                warnings=[r.warning for r in recordings if r.warning]).run()
        return
    make_replay_app(recordings[0], speed=speed, paused=paused, theme=theme).run()
