"""The live check's summary line reads right: a gap, not "within 97.5 % of live", and a busy machine is named."""

from __future__ import annotations

from gammatune_tui.bench.modes.simulate import live_check_line


def test_a_small_gap_reads_as_a_gap():
    line = live_check_line(36, 36, [1.02, 0.97])
    assert "differs from live by 3.0% at worst, 2.5% on average" in line and "within" not in line
    assert "busy" not in line


def test_a_gap_from_load_says_the_timings_moved():
    line = live_check_line(36, 36, [1.975, 1.0])
    assert "differs from live by 97.5% at worst" in line and "within" not in line
    assert "busy machine" in line and "step-exact count is what checks the simulator" in line
