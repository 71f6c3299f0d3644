"""docs/recording-format.md's example is a valid recording whose numbers add up."""

from __future__ import annotations

import json
from pathlib import Path

from gammatune_tui.engine.events import SessionHeader, SessionSummary, event_from_json
from gammatune_tui.session.stats import stats_of

DOC = Path(__file__).resolve().parents[2] / "docs" / "recording-format.md"


def test_documented_example_parses_and_matches_its_summary():
    block = DOC.read_text(encoding="utf-8").split("## Example")[1].split("```json")[1].split("```")[0].strip()
    dec, i, events = json.JSONDecoder(), 0, []
    while i < len(block):
        while i < len(block) and block[i].isspace():
            i += 1
        obj, i = dec.raw_decode(block, i)
        events.append(event_from_json(obj))
    assert isinstance(events[0], SessionHeader) and isinstance(events[-1], SessionSummary)
    s, summary = stats_of(events), events[-1]
    assert (s.tokens, s.steps, s.drafted, s.accepted) == (summary.tokens, summary.steps, summary.drafted,
                                                         summary.accepted)
    assert abs(s.acceptance_rate - summary.acceptance_rate) < 1e-3
    assert s.per_position == summary.per_position
    assert "".join(t.text for e in events[1:-1] for t in e.emitted) == summary.text
