"""Messages the compare screen's measuring worker posts (post_message is thread-safe)."""

from __future__ import annotations

from textual.message import Message

from ...session.compare import MethodRun


class CompareProgress(Message):
    """The progress line's text; only the latest matters."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CompareProgress)


class MethodMeasured(Message):
    """One method's run is measured: its pane can show it."""

    def __init__(self, run: MethodRun) -> None:
        super().__init__()
        self.run = run


class MeasureDone(Message):
    def __init__(self, error: str = "") -> None:
        super().__init__()
        self.error = error
