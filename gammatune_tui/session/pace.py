"""A live session's pace: a cap on steps per second, so a person can watch each step and tune while it runs.

The demo pair writes 256 tokens in about a second, faster than anyone can
read a step or change η mid-generation. A `StepPacer` holds the decoder
between two steps until 1/rate seconds have passed since the previous step
began (the step's own compute counts toward the interval), and the rate can
change, or a stop end the wait, from any thread while it waits.

The wait is never part of the timing statistics. It happens while the
decoder's generator is suspended between two steps, so each step's own
`draft_s`, `verify_s` and `step_s` never include it; the decoder's clocks
since the session began (`elapsed_s`, the summary's `wall_s` and
`tokens_per_s`) do, and `paced()` takes the time spent waiting back out of
them before anyone (the screen, a recording, the statistics) sees the events.
So no wait is ever counted. The steps themselves still run slower right
after a sleep than back to back (about a third on a nearly idle 2-core VM;
docs/benchmarks.md, "Pacing and the timings"), which no bookkeeping here can
undo: the user guide says so, and speed figures belong to full speed.

Replays have their own clock (`pacing.py`: recorded time to wall time);
this module is for live sources only.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Callable, Iterable, Iterator

from ..engine.events import SessionSummary, StepEvent
from ..errors import InvalidParameter

PACES: tuple[float, ...] = (0.0, 10.0, 4.0, 2.0, 1.0, 0.5)
"""The rates (steps per second) the pace key steps through, fastest first; 0 = full speed."""

MAX_PACE = 1000.0


def check_pace(steps_per_s: object) -> float:
    """A pace is a finite number of steps per second >= 0 (0 = full speed, no cap)."""
    if isinstance(steps_per_s, bool) or not isinstance(steps_per_s, (int, float)) \
            or not math.isfinite(steps_per_s) or steps_per_s < 0:
        raise InvalidParameter(f"pace must be a number of steps per second >= 0 (0 = full speed), got {steps_per_s!r}")
    return min(float(steps_per_s), MAX_PACE)


def next_pace(steps_per_s: float, direction: int = 1) -> float:
    """The pace after one press of the pace key: the next slower one in PACES (direction -1: faster).

    It stops at its ends: slower than the slowest, or faster than full speed,
    is the same pace (the key's caller says so); wrapping round made Shift+F9
    "faster" at full speed jump to 0.5 steps/s, and F9 "slower" at 0.5 jump
    to full speed.
    """
    if steps_per_s in PACES:
        i = PACES.index(steps_per_s) + direction
        return PACES[i] if 0 <= i < len(PACES) else steps_per_s
    # a rate typed on the command line: the nearest listed one in that direction
    if direction > 0:
        slower = [p for p in PACES if p and p < steps_per_s]
        return slower[0] if slower else steps_per_s
    faster = [p for p in PACES if not p or p > steps_per_s]
    return faster[-1]


def at_pace_end(steps_per_s: float, direction: int) -> str:
    """Why the pace key cannot go further that way ('' when it can): for the notice at either end."""
    if next_pace(steps_per_s, direction) != steps_per_s:
        return ""
    if direction < 0:
        return "already at full speed: Shift+F9 can go no faster (F9 slows it)"
    return f"already at {pace_label(steps_per_s)}, the slowest: F9 can go no slower (Shift+F9 speeds it up)"


def pace_label(steps_per_s: float) -> str:
    """'full speed', '4 steps/s', '0.5 steps/s' (for the header and notices)."""
    if not steps_per_s:
        return "full speed"
    return f"{steps_per_s:g} step/s" if steps_per_s == 1 else f"{steps_per_s:g} steps/s"


Idle = Callable[[float], None]
"""Waits up to the given seconds for something else to do (the child process reads its command pipe)."""


class StepPacer:
    """Holds a session between steps to at most `steps_per_s` steps a second (0: no cap).

    `begin()` when a session starts; `wait()` after each step's event was
    handed on; `set()` and `interrupt()` from any thread. `waited_s` is the
    time this session spent waiting.
    """

    def __init__(self, steps_per_s: float = 0.0) -> None:
        self._rate = check_pace(steps_per_s)
        self._cond = threading.Condition()
        self._interrupted = False
        self._last = time.perf_counter()
        self.waited_s = 0.0

    @property
    def steps_per_s(self) -> float:
        return self._rate

    def set(self, steps_per_s: float) -> None:
        """A new rate; a wait in progress recomputes its end at once."""
        rate = check_pace(steps_per_s)
        with self._cond:
            self._rate = rate
            self._cond.notify_all()

    def interrupt(self) -> None:
        """End the wait in progress (and any later one of this session) now: the session is being stopped."""
        with self._cond:
            self._interrupted = True
            self._cond.notify_all()

    def begin(self) -> None:
        with self._cond:
            self._interrupted = False
            self._last = time.perf_counter()
            self.waited_s = 0.0

    def wait(self, idle: Idle | None = None) -> float:
        """Hold until 1/rate seconds after the previous step began; returns the seconds waited."""
        start = time.perf_counter()
        with self._cond:
            while not self._interrupted and self._rate > 0:
                left = self._last + 1.0 / self._rate - time.perf_counter()
                if left <= 0:
                    break
                if idle is None:
                    self._cond.wait(left)
                else:   # let the caller do its own waiting (and call set/interrupt) without the lock
                    self._cond.release()
                    try:
                        idle(min(left, 0.1))
                    finally:
                        self._cond.acquire()
            end = time.perf_counter()
            self._last = end
            waited = end - start
            self.waited_s += waited
        return waited


def paced(events: Iterable, pacer: StepPacer | None, idle: Idle | None = None) -> Iterator:
    """`events` (one session of a live decoder) held to the pacer's rate, the waiting taken out of their clocks.

    Anything that is not a step or the summary passes through untouched.
    """
    if pacer is None:
        yield from events
        return
    pacer.begin()
    for ev in events:
        waited = pacer.waited_s
        if isinstance(ev, StepEvent):
            if waited and ev.elapsed_s:
                ev = dataclasses.replace(ev, elapsed_s=max(ev.step_s, ev.elapsed_s - waited))
            yield ev
            pacer.wait(idle)
            continue
        if isinstance(ev, SessionSummary) and waited and ev.wall_s:
            wall = max(0.0, ev.wall_s - waited)
            ev = dataclasses.replace(ev, wall_s=wall, tokens_per_s=ev.tokens / wall if wall > 0 else 0.0)
        yield ev
