"""The compare screen's measuring worker and the messages it posts (post_message is thread-safe).

`measure` runs in a worker thread: it loads the pair and measures every
method alone, posting progress, each run as it is measured and the end (with
the error, if one stopped it). The screen only shows what the messages say.
"""

from __future__ import annotations

import time
from typing import Callable

from textual.message import Message

from ...errors import GammatuneError
from ...render.safe_text import one_line
from ...session.compare import MethodRun
from ...session.compare_job import CompareJob


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


def measure(job: CompareJob, post: Callable[[Message], object], warn: Callable[[str], object]) -> None:
    """Prepare `job` and measure its methods, posting what happens (`warn`: a notice, from this thread)."""
    last = [0.0]

    def loading(stage: str, frac: float) -> None:
        pct = max(0.0, min(1.0, float(frac))) * 100
        post(CompareProgress(f"loading models: {one_line(stage)} {pct:.0f}%"))

    def progress(i: int, n: int, label: str, tokens: int) -> None:
        now = time.monotonic()
        if i < n and (tokens == 0 or now - last[0] > 0.25):
            last[0] = now
            post(CompareProgress(f"measuring {i + 1}/{n}: {label} · {tokens} tokens  "
                                 f"(each method runs alone; the race starts when all are measured)"))

    try:
        job.prepare(loading)
        if job.notice:   # a system prompt this pair cannot read: left out, and said
            warn(job.notice[:1].upper() + job.notice[1:] + ".")
        def measured(run: MethodRun) -> None:
            post(MethodMeasured(run))

        job.run(progress, measured)
    except GammatuneError as exc:
        post(MeasureDone(str(exc)))
    except Exception as exc:  # a failing model must not kill the UI
        post(MeasureDone(f"{type(exc).__name__}: {exc}"))
    else:
        post(MeasureDone())
