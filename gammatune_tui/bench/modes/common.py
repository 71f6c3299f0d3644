"""What every mode of `gammatune bench` shares: the progress bar on stderr and a quiet transformers."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn)
from rich.text import Text
from transformers.utils import logging as hf_logging


def quiet_transformers() -> None:
    """No transformers warnings or download bars over the progress bar and tables."""
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class CountdownColumn(ProgressColumn):
    """Time left that counts down between updates.

    Rich's own column divides by the speed seen in the last 30 s: when one
    run takes longer than that (a live bench on 2 cores), it holds a stale
    figure, then shows nothing. Here the estimate made at each advance
    (this run's mean time per item × items left) counts down with the clock
    until the next advance corrects it; items done before this run started
    (resumed traces) are not counted as this run's speed.
    """

    max_refresh = 0.5

    def __init__(self) -> None:
        super().__init__()
        self._start: dict = {}   # task id → (completed when first seen, time)
        self._last: dict = {}    # task id → (completed, estimate in seconds, time it was made)

    def render(self, task) -> Text:   # type: ignore[no-untyped-def]
        now = time.monotonic()
        start = self._start.setdefault(task.id, (task.completed, now))
        done = task.completed - start[0]
        if task.total is None or done <= 0:
            return Text("-:--:--", style="progress.remaining")
        last = self._last.get(task.id)
        if last is None or last[0] != task.completed:
            per_item = (now - start[1]) / done
            last = (task.completed, per_item * max(0.0, task.total - task.completed), now)
            self._last[task.id] = last
        return Text(_clock(max(0.0, last[1] - (now - last[2]))), style="progress.remaining")


def progress_bar(err: Console) -> Progress:
    """A transient bar with elapsed time and ETA, on the error console."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
                    TimeElapsedColumn(), TextColumn("ETA"), CountdownColumn(), console=err, transient=True)
