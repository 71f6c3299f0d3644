"""At most one redraw per interval, the first at once: the stats panel's and the step inspector's rhythm.

A session can stream hundreds of steps a second; formatting a table for each
would cost more than the step. So a widget asks for a redraw with
`request()`: it runs at once if the last one is older than `interval`
seconds, else once at the interval's end, however many requests came
between. `run()` redraws now (a session ended: nothing may be left waiting).
"""

from __future__ import annotations

import time
from typing import Callable

from textual.widget import Widget


class Throttle:
    """Runs `draw` for `widget` at most every `interval` seconds (see the module docstring)."""

    def __init__(self, widget: Widget, interval: float, draw: Callable[[], None]) -> None:
        self.widget, self.interval, self._draw = widget, interval, draw
        self._scheduled = False
        self._last = float("-inf")

    def request(self) -> None:
        if self._scheduled:
            return
        wait = self._last + self.interval - time.monotonic()
        if wait <= 0:
            self.run()
        else:
            self._scheduled = True
            self.widget.set_timer(wait, self.run)

    def run(self) -> None:
        self._scheduled = False
        self._last = time.monotonic()
        self._draw()
