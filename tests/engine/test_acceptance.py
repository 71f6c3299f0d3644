"""Per-position acceptance: one counting rule for the decoder's summary, the UI's stats and the bench."""

from __future__ import annotations

import pytest

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.acceptance import count_step, position_rates
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.session.stats import stats_of


def test_hand_worked_steps():
    drafted: list[int] = []
    accepted: list[int] = []
    for d, a in [(3, 1), (1, 1), (4, 4), (0, 0), (2, 0)]:
        count_step(drafted, accepted, d, a)
    assert drafted == [4, 3, 2, 1]
    assert accepted == [3, 1, 1, 1]
    assert position_rates(drafted, accepted) == pytest.approx([0.75, 1 / 3, 0.5, 1.0])


def test_decoder_summary_agrees_with_running_stats(tiny_pair):
    dec = SpeculativeDecoder(tiny_pair, PolicySettings.build("specdecode", 5), SamplingConfig(temperature=0.0))
    events = list(dec.generate([1, 2, 3, 4], max_new_tokens=40))
    summary = events[-1]
    stats = stats_of(events)
    assert summary.per_position == pytest.approx(stats.per_position)
    assert len(summary.per_position) == 5
    assert summary.acceptance_rate == pytest.approx(stats.acceptance_rate)
