"""Replay: a recording as an event source, played at its recorded pace.

The chat and compare screens drive a `ReplaySource` exactly like a live one
(DESIGN: nothing downstream knows where events come from). On top of the
EventSource protocol it is a small player whose controls — pause, resume,
step forward and back, speed, jump to end — are called from the UI thread
while `events()` runs in a worker; one condition variable serialises them, and
every wait is interruptible so a control acts at once.

Pace: a step is released when the recording's clock (`StepEvent.elapsed_s`,
or the sum of `step_s` / draft + verify when absent) has advanced by its
duration divided by the speed. Speed 0 means no waiting at all.
"""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..errors import InvalidParameter, RecordingError
from ..resources import demo_prompts_dir
from .recording import RecordedSession, Recording, read_recording
from .source import Progress

MAX_STEP_WAIT_S = 5.0
"""A recorded step never holds the player longer than this (a hostile or odd recording cannot freeze it)."""

MAX_SPEED = 1000.0


def check_speed(speed: float) -> float:
    """Speed is a finite multiplier >= 0; 0 means as fast as possible."""
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not math.isfinite(speed) or speed < 0:
        raise InvalidParameter(f"speed must be a number >= 0 (0 = no waiting), got {speed!r}")
    return min(float(speed), MAX_SPEED)


def step_durations(events: Sequence[Event]) -> list[float]:
    """Seconds each event took when recorded (0 for header and summary).

    Uses the cumulative `elapsed_s` when the recording has it (it includes the
    engine's overhead between steps), else `step_s`, else draft + verify time.
    Negative or non-finite values (a damaged or hostile file) count as 0.
    """
    out: list[float] = []
    prev = 0.0
    for ev in events:
        d = 0.0
        if isinstance(ev, StepEvent):
            if ev.elapsed_s > 0 and ev.elapsed_s >= prev:
                d = ev.elapsed_s - prev
                prev = ev.elapsed_s
            else:
                d = ev.step_s if ev.step_s > 0 else ev.draft_s + ev.verify_s
                prev += d if math.isfinite(d) else 0.0
        elif isinstance(ev, SessionHeader):
            prev = 0.0
        out.append(d if math.isfinite(d) and d > 0 else 0.0)
    return out


def schedule(events: Sequence[Event], cap: float | None = MAX_STEP_WAIT_S) -> list[float]:
    """The recorded time (seconds from the session's start) at which each event appeared.

    `cap` bounds any one step (the player's guard against odd files); the
    compare race passes None so that relative speeds stay exact.
    """
    t = 0.0
    out = []
    for d in step_durations(events):
        t += d if cap is None else min(d, cap)
        out.append(t)
    return out


def resolve_recording(name: str | os.PathLike) -> Path:
    """A path, or the bare name of a shipped demo recording (`five-methods`)."""
    p = Path(name)
    if p.exists():
        return p
    if not p.is_absolute() and len(p.parts) > 1 and p.parts[0] == "demo_prompts":
        # the README's `demo_prompts/recordings/x.jsonl`, run outside a checkout: the installed copy
        try:
            shipped = demo_prompts_dir().joinpath(*p.parts[1:])
        except FileNotFoundError:
            shipped = None
        if shipped is not None and shipped.is_file():
            return shipped
    s = str(name)
    if os.sep not in s and "/" not in s:
        try:
            shipped_dir = demo_prompts_dir() / "recordings"
        except FileNotFoundError:
            shipped_dir = None
        if shipped_dir is not None:
            for candidate in (shipped_dir / s, shipped_dir / f"{s}.jsonl"):
                if candidate.is_file():
                    return candidate
    return p  # read_recording names it in a one-line error


def shipped_recordings() -> list[Path]:
    """The demo recordings that come with gammatune (for help texts and errors)."""
    try:
        d = demo_prompts_dir() / "recordings"
    except FileNotFoundError:
        return []
    return sorted(d.glob("*.jsonl")) if d.is_dir() else []


class ReplaySource:
    """Plays a recording's sessions, one per `events()` call, with player controls.

    Read-only: `request()` is ignored. `stop()` ends the current session's
    iteration at once (no summary is invented). Controls are thread-safe.
    """

    read_only = True

    def __init__(
        self,
        recording: Recording | RecordedSession | str | os.PathLike,
        speed: float = 1.0,
        *,
        paused: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._cond = threading.Condition()
        self._clock = clock
        self._speed = check_speed(speed)
        self._paused = paused
        self._credits = 0
        self._to_end = False
        self._stopped = False
        self._cursor = 0
        self._session_index = -1
        self._current: list[Event] = []
        self._path: Path | None = None
        self.recording: Recording | None = None
        self.warning = ""
        if isinstance(recording, RecordedSession):
            self.recording = Recording(Path("<memory>"), [recording])
        elif isinstance(recording, Recording):
            self.recording = recording
        else:
            self._path = resolve_recording(recording)
        self._loaded()

    def _loaded(self) -> None:
        if self.recording is not None:
            self.warning = self.recording.warning
            self.title = f"replay: {self.recording.path.name}"
        else:
            self.title = f"replay: {self._path.name if self._path else ''}"

    # -- EventSource protocol ------------------------------------------------------
    def prepare(self, progress: Progress | None = None) -> None:
        """Reads and validates the file (raises RecordingError with file and line)."""
        if self.recording is None:
            if progress:
                progress("reading recording", 0.0)
            self.recording = read_recording(self._path)  # type: ignore[arg-type]
            self._loaded()
        if progress:
            progress("ready", 1.0)

    @property
    def sessions(self) -> list[RecordedSession]:
        if self.recording is None:
            self.prepare()
        return self.recording.sessions  # type: ignore[union-attr]

    @property
    def has_next_session(self) -> bool:
        return self._session_index + 1 < len(self.sessions)

    def events(self, prompt: str | None = None) -> Iterator[Event]:
        """The recording from where it stands: the rest of the current session, else the next one.

        The prompt is ignored (a recording cannot be re-asked). "The rest of
        the current session" only exists after a step back or a stop, so a
        consumer that calls this again after stepping back plays on from there.
        """
        sessions = self.sessions
        with self._cond:
            self._stopped = False
            if self._cursor == 0 or self._cursor >= len(self._current):
                if self._session_index + 1 >= len(sessions):
                    return
                self._session_index += 1
                self._current = sessions[self._session_index].events
                self._cursor = 0
            durations = step_durations(self._current)
        while True:
            with self._cond:
                i = self._cursor
                if self._stopped or i >= len(self._current):
                    return
                if i > 0 and not self._release(durations[i]):
                    return
                i = self._cursor  # a step back while waiting moved it
                if i >= len(self._current):
                    return
                ev = self._current[i]
                self._cursor = i + 1
            yield ev

    def _release(self, duration: float) -> bool:
        """Waits (lock held) until the next event may go; False when stopped."""
        left = min(duration, MAX_STEP_WAIT_S)
        while True:
            if self._stopped:
                return False
            if self._to_end:
                return True
            if self._paused:
                if self._credits > 0:
                    self._credits -= 1
                    return True
                self._cond.wait()
                continue
            if self._speed == 0 or left <= 0:
                return True
            t0 = self._clock()
            speed = self._speed
            self._cond.wait(timeout=left / speed)
            left -= (self._clock() - t0) * speed

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        """Recordings are read-only: controls show what was recorded and change nothing."""

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    # -- player controls (thread-safe) ---------------------------------------------
    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def position(self) -> int:
        """Events of the current session released so far (header included)."""
        return self._cursor

    @property
    def total(self) -> int:
        return len(self._current)

    @property
    def session_index(self) -> int:
        return self._session_index

    @property
    def at_end(self) -> bool:
        return self._cursor >= len(self._current) and not self.has_next_session

    def pause(self) -> None:
        with self._cond:
            self._paused = True
            self._cond.notify_all()

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._credits = 0
            self._cond.notify_all()

    def toggle_pause(self) -> bool:
        """Returns the new paused state."""
        with self._cond:
            self._paused = not self._paused
            self._credits = 0
            self._cond.notify_all()
            return self._paused

    def set_speed(self, speed: float) -> float:
        speed = check_speed(speed)
        with self._cond:
            self._speed = speed
            self._cond.notify_all()
        return speed

    def step_forward(self, n: int = 1) -> None:
        """Pauses, then lets exactly n more events through."""
        with self._cond:
            self._paused = True
            self._credits += max(0, n)
            self._cond.notify_all()

    def step_back(self, n: int = 1) -> list[Event]:
        """Pauses and takes back the last n steps; returns the events that stay shown.

        The consumer redraws the current session from that prefix (the header
        always stays). Resuming plays on from there.
        """
        with self._cond:
            self._paused = True
            self._credits = 0
            cur = self._cursor
            if cur > 0 and isinstance(self._current[cur - 1], SessionSummary):
                cur -= 1  # the summary goes with the last step: "back" always takes back a step
            self._cursor = max(min(1, len(self._current)), cur - max(0, n))
            self._to_end = False
            self._cond.notify_all()
            return list(self._current[: self._cursor])

    def jump_to_end(self) -> None:
        """Releases the rest of the recording (every remaining session) without waiting."""
        with self._cond:
            self._to_end = True
            self._cond.notify_all()

    @property
    def current_events(self) -> Sequence[Event]:
        """The whole current session (released or not); never mutated, so safe to index from any thread."""
        return self._current

    @property
    def session_finished(self) -> bool:
        return self._cursor >= len(self._current)

    def shown(self) -> list[Event]:
        """The current session's events released so far."""
        with self._cond:
            return list(self._current[: self._cursor])


def is_comparison(recording: Recording) -> bool:
    """A compare recording: several sessions of one turn, each labelled with a distinct method."""
    ss = recording.sessions
    if len(ss) < 2:
        return False
    labels = [s.header.label for s in ss]
    return all(labels) and len(set(labels)) == len(labels) and len({s.header.turn for s in ss}) == 1


def summary_of(events: Sequence[Event]) -> SessionSummary | None:
    for ev in reversed(events):
        if isinstance(ev, SessionSummary):
            return ev
    return None
