"""How recorded time maps to wall time: the replay player's pace and the compare race's.

A recording carries each step's measured time (`elapsed_s`, else `step_s`,
else draft + verify); playing it back waits that long divided by the speed.
The race plays several recordings together, scaled so it lasts a few
seconds even when the real runs took a fraction of one (the scale is shown,
so it stays honest).
"""

from __future__ import annotations

import math
from typing import Sequence

from ..engine.events import Event, SessionHeader, StepEvent
from ..errors import InvalidParameter

MAX_SPEED = 1000.0
MIN_STEPPED_SPEED = 0.125
"""The slowest speed the +/- keys reach."""

MAX_STEP_WAIT_S = 5.0
"""A recorded step never holds the player longer than this (a hostile or odd recording cannot freeze it)."""

MIN_RACE_S = 4.0
"""A race shorter than this in real time is slowed down to last this long."""
MAX_RACE_S = 60.0
"""A race longer than this is sped up."""


def check_speed(speed: float) -> float:
    """Speed is a finite multiplier >= 0; 0 means as fast as possible."""
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not math.isfinite(speed) or speed < 0:
        raise InvalidParameter(f"speed must be a number >= 0 (0 = no waiting), got {speed!r}")
    return min(float(speed), MAX_SPEED)


def next_speed(speed: float, factor: float) -> float:
    """The speed after a +/- key: `factor` times the current one (from "no waiting", from 1)."""
    return min(MAX_SPEED, max(MIN_STEPPED_SPEED, (speed or 1.0) * factor))


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


def race_scale(longest_s: float) -> float:
    """Recorded seconds per wall second at speed 1, for a race whose slowest run took `longest_s`."""
    if longest_s <= 0:
        return 1.0
    if longest_s < MIN_RACE_S:
        return longest_s / MIN_RACE_S
    if longest_s > MAX_RACE_S:
        return longest_s / MAX_RACE_S
    return 1.0
