"""Replay: recordings played back, as an event source, at their recorded pace.

The chat and compare screens drive a `ReplaySource` exactly like a live one
(docs/architecture.md: nothing downstream knows where events come from). On top of the
EventSource protocol it is a small player whose controls — pause, resume,
step forward and back, speed, jump to end — are called from the UI thread
while `events()` runs in a worker; one condition variable serialises them, and
every wait is interruptible so a control acts at once. Pace: a step is
released when the recording's clock has advanced by its duration divided by
the speed (`pacing.py`); speed 0 means no waiting at all.

Also here: what `gammatune replay FILE…` opens (`open_playlist`) and the
settings a recording says were in force (`recorded_settings`), which the
read-only controls show.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ..engine.events import Event, SessionSummary
from ..engine.policies import PARAM_NAMES, PolicySettings
from ..engine.common.sampling import SamplingConfig
from ..errors import GammatuneError, InvalidParameter, RecordingError
from .compare import MAX_METHODS, MethodRun, runs_from_recording
from .pacing import MAX_STEP_WAIT_S, check_speed, next_speed, step_durations
from .recording import RecordedSession, Recording, read_recording, resolve_recording, shipped_recordings
from .source import Progress

if TYPE_CHECKING:
    from .hindsight import Hindsight


def recorded_settings(method: str, gamma0: int | None, params: dict[str, Any], sampling: dict[str, Any] | None,
                      fallback_gamma0: int = 4) -> tuple[PolicySettings | None, SamplingConfig | None]:
    """The settings a recording says were used; None for what its values do not make valid.

    A header gives all four arguments; a step that changed settings gives its
    method and params only (γ0 then comes from the params, else `fallback_gamma0`).
    """
    try:
        keep = {k: params[k] for k in PARAM_NAMES if params.get(k) is not None}
        st = PolicySettings.build(method, gamma0 or params.get("gamma0") or fallback_gamma0, **keep)
    except (GammatuneError, ValueError, TypeError):
        return None, None
    sc = None
    if sampling:
        try:
            seed = sampling.get("seed")
            sc = SamplingConfig(temperature=float(sampling.get("temperature", 0.0)),
                                top_k=int(sampling.get("top_k", 0)), top_p=float(sampling.get("top_p", 1.0)),
                                repetition_penalty=float(sampling.get("repetition_penalty", 1.0)),
                                seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None)
        except (GammatuneError, ValueError, TypeError):
            sc = None
    return st, sc


class ReplaySource:
    """Plays a recording's sessions, one per `events()` call, with player controls.

    Read-only: `request()` is ignored. `stop()` ends the current session's
    iteration at once (no summary is invented). Controls are thread-safe.
    """

    read_only = True
    hindsight: Hindsight | None = None      # a recording is not checked against the oracle again
    plain_speed = None    # nor is plain decoding timed: no models run

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
            assert self._path is not None   # given a path, not a recording (__init__)
            self.recording = read_recording(self._path)
            self._loaded()
        if progress:
            progress("ready", 1.0)

    @property
    def sessions(self) -> list[RecordedSession]:
        if self.recording is None:
            self.prepare()
        assert self.recording is not None   # prepare read it, or raised
        return self.recording.sessions

    @property
    def settings(self) -> PolicySettings:
        """The policy settings recorded for the session being played (the first one before any plays)."""
        return self._recorded()[0] or PolicySettings()

    @property
    def sampling(self) -> SamplingConfig:
        return self._recorded()[1] or SamplingConfig()

    def _recorded(self) -> tuple[PolicySettings | None, SamplingConfig | None]:
        if self.recording is None:
            return None, None
        h = self.recording.sessions[max(0, self._session_index)].header
        return recorded_settings(h.method, h.gamma0, h.params, h.sampling)

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

    def close(self) -> None:
        """Nothing to let go of: the recording is read whole at `prepare()`."""

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
    def session_index(self) -> int:
        return self._session_index

    @property
    def at_end(self) -> bool:
        return self._cursor >= len(self._current) and not self.has_next_session

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

    def change_speed(self, factor: float) -> float:
        """The +/- keys: `factor` times the current speed; returns the new one."""
        return self.set_speed(next_speed(self._speed, factor))

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


def is_comparison(recording: Recording) -> bool:
    """A compare recording: sessions of one turn, labelled with two or more methods (repeats share a label)."""
    ss = recording.sessions
    if len(ss) < 2:
        return False
    labels = [s.header.label for s in ss]
    return all(labels) and len(set(labels)) >= 2 and len({s.header.turn for s in ss}) == 1


@dataclass
class Playlist:
    """What `gammatune replay FILE…` shows: the files, their sessions, and whether they go side by side."""

    recordings: list[Recording]
    runs: list[MethodRun]
    compare: bool

    @property
    def warnings(self) -> list[str]:
        return [r.warning for r in self.recordings if r.warning]

    @property
    def title(self) -> str:
        return "replay: " + ", ".join(r.path.name for r in self.recordings)


def open_playlist(names: Sequence[str | os.PathLike]) -> Playlist:
    """Reads and validates every file before anything is shown (a bare name finds a shipped recording).

    One recording of several labelled methods is a comparison; several files
    always are (each session a pane, named by file where labels collide).
    """
    recordings = []
    for name in names:
        if not str(name).strip():
            raise RecordingError("the file name is empty; give a recording (.jsonl) or a shipped demo's name")
        path = resolve_recording(name)
        if not path.exists() and not Path(name).suffix:
            shipped = ", ".join(p.stem for p in shipped_recordings())
            raise RecordingError(f"{name}: no such recording" + (f" (shipped demos: {shipped})" if shipped else ""))
        recordings.append(read_recording(path))
    runs = [run for rec in recordings for run in runs_from_recording(rec)]
    if len(recordings) == 1:
        return Playlist(recordings, runs, is_comparison(recordings[0]))
    labels = [r.label for r in runs]
    if len(set(labels)) != len(labels):
        named = (f"{rec.path.stem}:{s.header.label or s.header.method}" for rec in recordings for s in rec.sessions)
        for run, label in zip(runs, named):
            run.label = label
    if len(runs) > MAX_METHODS:
        raise InvalidParameter(f"side by side shows at most {MAX_METHODS} sessions; these files hold {len(runs)}")
    return Playlist(recordings, runs, True)
