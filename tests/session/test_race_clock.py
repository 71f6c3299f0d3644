"""The compare race's clock, without Textual: pace, scale, pause, speed and the finishing order."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from gammatune_tui.errors import InvalidParameter
from gammatune_tui.session.pacing import MIN_RACE_S, schedule
from gammatune_tui.session.race_clock import RaceClock
from gammatune_tui.session.synthetic import synthetic_session


def _runs():
    return {m: synthetic_session(m, seed=4) for m in ("specdecode", "gammatune+")}


def _race(speed=1.0, paused=False, now=100.0):
    runs = _runs()
    clock = RaceClock(speed)
    clock.start(list(runs), list(runs.values()), now, paused=paused)
    return clock, runs


def test_each_contestant_shows_what_its_recorded_pace_has_reached_and_the_faster_wins():
    clock, runs = _race()
    totals = [c.total_s for c in clock.contestants]
    fast, slow = totals.index(min(totals)), totals.index(max(totals))
    assert totals[fast] < totals[slow]
    assert clock.advance_to(totals[fast] / 2) == []
    times = schedule(list(runs.values())[fast], cap=None)
    assert 0 < clock.due(fast) < len(times) and clock.due(fast) == sum(t <= totals[fast] / 2 for t in times)
    assert clock.advance_to(totals[fast]) == [fast] and clock.racing
    assert clock.due(fast) == len(times) and clock.contestants[fast].place == 0
    assert clock.to_end() == [slow] and not clock.racing
    assert clock.finish_order == [clock.contestants[fast].label, clock.contestants[slow].label]


def test_those_crossing_in_one_tick_finish_fastest_first_whatever_the_order_listed():
    clock, _ = _race()
    slow_first = sorted(range(2), key=lambda i: -clock.contestants[i].total_s)
    assert clock.to_end() == sorted(slow_first, key=lambda i: clock.contestants[i].total_s)
    assert [c.place for c in clock.contestants] == [0 if c.total_s == min(d.total_s for d in clock.contestants)
                                                    else 1 for c in clock.contestants]


def test_a_short_race_is_slowed_to_last_a_few_seconds_and_time_follows_the_wall():
    clock, _ = _race(now=100.0)
    longest = max(c.total_s for c in clock.contestants)
    assert longest < MIN_RACE_S and clock.rate * MIN_RACE_S == pytest.approx(longest)
    clock.tick(101.0)
    assert clock.t == pytest.approx(clock.rate)            # one wall second = `rate` recorded seconds
    clock.change_speed(2.0)
    clock.tick(102.0)
    assert clock.t == pytest.approx(3 * clock.rate / 2)     # the next second at twice the speed
    clock.tick(100 + MIN_RACE_S)
    assert not clock.racing and len(clock.finish_order) == 2


def test_paused_race_time_stands_still_and_counts_on_from_the_resume():
    clock, _ = _race(paused=True, now=10.0)
    assert clock.tick(50.0) == [] and clock.t == 0.0
    clock.set_paused(False, 60.0)
    clock.tick(60.5)
    assert clock.t == pytest.approx(0.5 * clock.rate)   # not the 50 s spent paused


def test_a_contestant_without_a_run_takes_no_part_and_a_new_race_starts_from_the_line():
    runs = _runs()
    clock = RaceClock(0)
    assert clock.instant
    clock.start(["a", "b", "c"], [runs["specdecode"], None, runs["gammatune+"]], 0.0)
    clock.to_end()
    assert not clock.racing and clock.contestants[1].place is None and clock.due(1) == 0
    assert sorted(clock.finish_order) == ["a", "c"]
    clock.start(["a", "b", "c"], [runs["specdecode"], None, runs["gammatune+"]], 0.0)
    assert clock.races == 2 and clock.racing and clock.finish_order == [] and clock.t == 0.0
    assert clock.advance_to(math.inf) and clock.advance_to(math.inf) == []   # placed once


def test_a_speed_that_is_not_a_number_is_refused():
    with pytest.raises(InvalidParameter):
        RaceClock(-1)


def test_the_clock_needs_no_textual():
    code = "import sys, gammatune_tui.session.race_clock; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
