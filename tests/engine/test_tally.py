"""The one tally: per-position acceptance and totals, the same for the decoder's summary, the UI's stats and the bench."""

from __future__ import annotations

import pytest

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.events.tally import SessionTally
from gammatune_tui.session.stats import stats_of


def test_hand_worked_steps():
    tally = SessionTally()
    for d, a in [(3, 1), (1, 1), (4, 4), (0, 0), (2, 0)]:
        tally.add_step(d, a, d, 0.001 * d, 0.01)
    assert tally.pos_drafted == [4, 3, 2, 1]
    assert tally.pos_accepted == [3, 1, 1, 1]
    assert tally.per_position == pytest.approx([0.75, 1 / 3, 0.5, 1.0])
    assert (tally.steps, tally.target_calls, tally.drafted, tally.accepted) == (5, 5, 10, 6)
    assert tally.acceptance_rate == pytest.approx(0.6)
    assert tally.draft_s == pytest.approx(0.01) and tally.verify_s == pytest.approx(0.05)


def test_adding_tallies_equals_tallying_all_steps():
    steps = [(3, 1), (1, 1), (4, 4), (0, 0), (2, 0), (6, 5)]
    whole, a, b = SessionTally(), SessionTally(), SessionTally()
    for i, (d, acc) in enumerate(steps):
        whole.add_step(d, acc, d, 0.0, 0.0)
        (a if i < 2 else b).add_step(d, acc, d, 0.0, 0.0)
    a.add(b)
    assert a == whole


def test_summary_reads_the_counts():
    tally = SessionTally()
    tally.add_step(4, 2, 4, 0.004, 0.01)
    tally.add_step(4, 4, 4, 0.004, 0.01)
    s = tally.summary(generated=8, wall=0.1, stop_reason="eos", text="abc")
    assert (s.tokens, s.steps, s.drafted, s.accepted, s.target_calls, s.draft_calls) == (8, 2, 8, 6, 2, 8)
    assert s.tokens_per_step == 4.0 and s.tokens_per_s == pytest.approx(80.0)
    assert s.acceptance_rate == 0.75 and s.per_position == [1.0, 1.0, 0.5, 0.5]
    assert s.stop_reason == "eos" and s.text == "abc"


def test_decoder_summary_agrees_with_running_stats(tiny_pair):
    dec = SpeculativeDecoder(tiny_pair, PolicySettings.build("specdecode", 5), SamplingConfig(temperature=0.0))
    events = list(dec.generate([1, 2, 3, 4], max_new_tokens=40))
    summary = events[-1]
    stats = stats_of(events)
    assert summary.per_position == pytest.approx(stats.per_position)
    assert len(summary.per_position) == 5
    assert summary.acceptance_rate == pytest.approx(stats.acceptance_rate)
