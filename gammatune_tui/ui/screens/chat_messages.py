"""Messages the chat screen's worker threads post (post_message is thread-safe), and the two workers.

The workers run in threads and only post: `prepare_source` says how loading
goes (`LoadProgress`, then `LoadDone`), `run_turn` posts ONE message per
event of a turn (`SourceEvent`, or `SourceNotice` for what is not an event)
and `TurnDone` at its end. The screen's handlers update its state; nothing
is drawn from a worker.
"""

from __future__ import annotations

from typing import Callable

from textual.message import Message

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
