"""The compare race's clock, without a screen: race time, pause, speed, who has finished and in which order.

The race plays recorded runs together, each at its measured pace: an event
appears once race time passes the recorded moment it appeared
(`pacing.schedule`, uncapped so relative speeds stay exact). Race time is
recorded seconds; it moves `rate` = scale × speed recorded seconds per wall
second, the scale chosen so a race lasts a few seconds (`pacing.race_scale`;
the screen shows it, so it stays honest). The clock is fed the wall time
(`tick(now)`), so it runs the same under a Textual timer and in a test;
pausing stops race time, and it counts on from the moment play resumes.

Contestants that cross the line in one tick finish in the order of their
recorded times, never in the order they were listed. A contestant with no run
(a method stopped before it was measured) takes no part. The compare screen
draws what the clock says (`due`, `place`) and forwards the keys to it.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Sequence

from ..engine.events import Event
from .pacing import check_speed, next_speed, race_scale, schedule


@dataclass
class Contestant:
    """One run in the race: its label and the recorded moment each of its events appeared."""

    label: str
    times: list[float] = field(default_factory=list)
    place: int | None = None
    """0 for the winner, once it has finished; None before (and for a contestant with no run)."""
    runs: bool = True
    """False for a contestant with no run (it never finishes and the race does not wait for it)."""

    @property
    def total_s(self) -> float:
        """The recorded time of its last event (its whole run)."""
        return self.times[-1] if self.times else 0.0


class RaceClock:
    """Race time for contestants at their recorded pace (see the module docstring)."""

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = check_speed(speed)
        self.scale = 1.0
        self.t = 0.0
        """Race time reached so far (recorded seconds)."""
        self.paused = False
        self.racing = False
        self.races = 0
        self.contestants: list[Contestant] = []
        self.finish_order: list[str] = []
        self._wall = 0.0   # the wall time race time was last brought up to

    def start(self, labels: Sequence[str], runs: Sequence[Sequence[Event] | None], now: float,
              paused: bool = False) -> None:
        """A new race from the line: `runs[i]` is contestant i's events (None or none: it takes no part)."""
        self.contestants = [Contestant(label, schedule(events, cap=None)) if events
                            else Contestant(label, runs=False) for label, events in zip(labels, runs)]
        self.finish_order = []
        self.races += 1
        self.scale = race_scale(max((c.total_s for c in self.contestants if c.runs), default=0.0))
        self.t = 0.0
        self._wall = now
        self.racing = True
        self.paused = paused

    @property
    def rate(self) -> float:
        """Recorded seconds per wall second."""
        return self.scale * self.speed

    @property
    def instant(self) -> bool:
        """Speed 0: a race ends as soon as it starts (tests, screenshots)."""
        return self.speed == 0

    def tick(self, now: float) -> list[int]:
        """Bring race time up to wall time `now` (unless paused); the contestants that finished, in order."""
        elapsed, self._wall = now - self._wall, now
        if not self.racing or self.paused:
            return []
        return self.advance_to(self.t + elapsed * self.rate)

    def set_paused(self, paused: bool, now: float) -> None:
        """Pause or resume: race time stands still while paused, and counts on from `now`."""
        self.paused = paused
        self._wall = now

    def advance_to(self, t: float) -> list[int]:
        """Set race time to `t`; the contestants that crossed the line on the way, fastest first."""
        if not self.racing:
            return []
        self.t = t
        finished = sorted((i for i, c in enumerate(self.contestants)
                           if c.runs and c.place is None and c.total_s <= t),
                          key=lambda i: self.contestants[i].total_s)
        for i in finished:
            self.contestants[i].place = len(self.finish_order)
            self.finish_order.append(self.contestants[i].label)
        if all(c.place is not None for c in self.contestants if c.runs):
            self.racing = False
        return finished

    def to_end(self) -> list[int]:
        """Every contestant's run shown whole at once (`e`)."""
        return self.advance_to(math.inf)

    def due(self, index: int) -> int:
        """How many of contestant `index`'s events race time has reached."""
        c = self.contestants[index]
        return bisect.bisect_right(c.times, self.t) if c.runs else 0

    def change_speed(self, factor: float) -> float:
        """The next speed of the +/- keys (`factor` 2 or 0.5); it applies from the next tick."""
        self.speed = next_speed(self.speed, factor)
        return self.speed
