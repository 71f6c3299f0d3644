"""Messages the chat screen's worker threads post (post_message is thread-safe)."""

from __future__ import annotations

from textual.message import Message

from ...engine.events import Event
from ...session.hindsight import Hindsight
from ...session.source import Notice


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
