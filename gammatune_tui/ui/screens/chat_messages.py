"""Messages the chat screen's worker threads post (post_message is thread-safe), the two workers, and `Turns`.

The workers run in threads and only post: `prepare_source` says how loading
goes (`LoadProgress`, then `LoadDone`), `run_turn` posts ONE message per
event of a turn (`SourceEvent`, or `SourceNotice` for what is not an event)
and `TurnDone` at its end. The screen's handlers update its state; nothing
is drawn from a worker. `Turns` starts them on the screen, one turn at a
time, and numbers the turns so that a message from an older one is dropped.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Callable

from textual.message import Message
from textual.screen import Screen

from ...engine.events import Event
from ...errors import GammatuneError
from ...session.hindsight import Hindsight
from ...session.recording import RecordingWriter
from ...session.source import EventSource, Notice

Post = Callable[[Message], object]


class LoadProgress(Message):
    """Model loading progress; only the latest matters."""

    def __init__(self, stage: str, fraction: float) -> None:
        super().__init__()
        self.stage = stage
        self.fraction = fraction

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


class LoadDone(Message):
    def __init__(self, error: str = "") -> None:
        super().__init__()
        self.error = error


class SourceEvent(Message):
    """One event of the running session (a header, a step or a summary)."""

    def __init__(self, event: Event, turn_id: int) -> None:
        super().__init__()
        self.event = event
        self.turn_id = turn_id


class SourceNotice(Message):
    """A source's note about the running turn (e.g. old turns left out of the context); not an event."""

    def __init__(self, notice: Notice, turn_id: int) -> None:
        super().__init__()
        self.notice = notice
        self.turn_id = turn_id


class TurnDone(Message):
    """The turn's events are over; `hindsight` is the source's post-session oracle check, if it made one."""

    def __init__(self, turn_id: int, error: str = "", hindsight: Hindsight | None = None) -> None:
        super().__init__()
        self.turn_id = turn_id
        self.error = error
        self.hindsight = hindsight


# -- the workers (run in threads: they only post) -----------------------------------------------
def prepare_source(source: EventSource, post: Post) -> None:
    """Prepare `source` (load the models), posting its progress and then `LoadDone` (with the error, if any)."""
    def progress(stage: str, fraction: float) -> None:
        post(LoadProgress(str(stage), float(fraction)))

    try:
        source.prepare(progress)
    except GammatuneError as exc:
        post(LoadDone(str(exc)))
    except Exception as exc:  # a model that fails to load must not kill the UI
        post(LoadDone(f"{type(exc).__name__}: {exc}"))
    else:
        post(LoadDone())


def run_turn(source: EventSource, prompt: str | None, turn_id: int, post: Post,
             recorder: RecordingWriter | None = None) -> None:
    """One session of `source`: each event to `recorder` and up as one message, then `TurnDone`."""
    error = ""
    try:
        for event in source.events(prompt):
            if isinstance(event, Notice):   # for the user, not part of the recording
                post(SourceNotice(event, turn_id))
                continue
            if recorder is not None:
                recorder.write(event)
            post(SourceEvent(event, turn_id))
    except GammatuneError as exc:
        error = str(exc)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    post(TurnDone(turn_id, error, source.hindsight))


class Turns:
    """The source's workers on `screen`: the load, then one turn at a time (see the module docstring).

    `recorder`, if set, gets every event of every turn; `close` closes it,
    and the source. `sent` keeps the last prompt and the sessions shown
    before it, so a prompt refused before its turn began can be given back.
    """

    def __init__(self, screen: Screen, source: EventSource, recorder: RecordingWriter | None = None) -> None:
        self.screen = screen
        self.source = source
        self.recorder = recorder
        self.turn_id = 0
        self.stop_requested = False
        self.sent: tuple[str | None, int] = (None, 0)

    def prepare(self) -> None:
        """Load the source in a worker (`LoadProgress`, then `LoadDone`)."""
        self.screen.run_worker(lambda: prepare_source(self.source, self.screen.post_message), thread=True,
                               group="prepare", exit_on_error=False)

    def start(self, prompt: str | None, sessions_shown: int) -> None:
        """Run one session of the source in a worker (prompt None: a recording's next session)."""
        self.turn_id += 1
        self.stop_requested = False
        self.sent = (prompt, sessions_shown)
        self.screen.run_worker(lambda: run_turn(self.source, prompt, self.turn_id, self.screen.post_message,
                                                self.recorder), thread=True, group="generate", exit_on_error=False)

    def current(self, turn_id: int) -> bool:
        """Whether a message comes from the turn running now (not one stopped or overtaken before it)."""
        return turn_id == self.turn_id

    def stop(self) -> None:
        """Esc: the source ends the running turn at its next step."""
        self.stop_requested = True
        self.source.stop()

    def refused(self, sessions_shown: int) -> str | None:
        """The last prompt, if its turn was refused before it began (no session shown since it was sent)."""
        prompt, before = self.sent
        return prompt if prompt is not None and sessions_shown == before else None

    def close(self, running: bool) -> None:
        """The screen goes: the running turn stopped, the recording and the source closed."""
        if running:
            with suppress(Exception):
                self.source.stop()
        if self.recorder is not None:
            self.recorder.close()
        with suppress(Exception):   # shutting down: nothing useful to report
            self.source.close()
