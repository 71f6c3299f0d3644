"""A session in vLLM's per-request spec-decode terms: the stats tally, the bench's JSON, `run`'s line, the panel."""

from __future__ import annotations

import pytest

from gammatune_tui.bench.modes.live import live_cells
from gammatune_tui.bench.results import RunRecord
from gammatune_tui.engine.events import DraftedToken, EmittedToken, StepEvent
from gammatune_tui.render.tables import acceptance_text
from gammatune_tui.session.stats import stats_of
from gammatune_tui.ui.widgets.stats_panel import render_stats

# (drafted, accepted) per step: the last step drafted nothing (the budget's last token)
STEPS = [(4, 4), (4, 1), (4, 0), (2, 2), (0, 0)]


def _events():
    for i, (d, a) in enumerate(STEPS):
        yield StepEvent(step=i, method="specdecode", params={}, gamma=4, accepted=a, target_token=None,
                        drafted=[DraftedToken(id=5, text="x", top_prob=0.9, chosen_prob=0.9) for _ in range(d)],
                        emitted=[EmittedToken(id=5, text="x", source="draft") for _ in range(a + 1)], gamma_next=4,
                        draft_s=0.001 * d, verify_s=0.01, step_s=0.011 + 0.001 * d)


def test_the_tally_speaks_vllms_per_request_metrics():
    sd = stats_of(_events()).speculative_decoding
    assert sd["num_spec_steps"] == 4   # the step that drafted nothing is no speculative step
    assert sd["num_accepted_draft_tokens"] == 7 and sd["num_draft_tokens"] == 14 and sd["num_spec_tokens"] == 4
    assert sd["mean_acceptance_length"] == pytest.approx(1 + 7 / 4)   # the bonus token included
    assert sd["draft_acceptance_rate"] == pytest.approx(0.5)
    # a dense histogram of length num_spec_tokens + 1 summing to the steps, as vLLM's
    assert sd["acceptance_histogram"] == [1, 1, 1, 0, 1]
    assert sum(sd["acceptance_histogram"]) == sd["num_spec_steps"]
    assert sum(j * n for j, n in enumerate(sd["acceptance_histogram"])) == sd["num_accepted_draft_tokens"]
    assert sd["acceptance_histogram_by_num_drafted"] == {"2": [0, 0, 1], "4": [1, 1, 0, 0, 1]}
    # vLLM's per-position counter and rate (steps accepting at least i + 1 drafts), and the conditional rate
    assert sd["num_accepted_tokens_per_pos"] == [3, 2, 1, 1]
    assert sd["per_position_acceptance_rate"] == pytest.approx([3 / 4, 2 / 4, 1 / 4, 1 / 4])
    assert sd["per_position_conditional_acceptance"] == pytest.approx([3 / 4, 2 / 3, 1, 1])
    assert sd["per_step_accepted"] == [4, 1, 0, 2] and sd["per_step_drafted"] == [4, 4, 4, 2]


def test_bench_records_and_cells_carry_them_and_still_read_back():
    r = RunRecord(method="specdecode", gamma0=4, prompt_id="p", kind="sim", tokens=12, wall_s=1.0)
    for d, a in STEPS:
        r.add_step(d, a, d, 0.0, 0.0)
    j = r.to_json()
    assert j["speculative_decoding"]["mean_acceptance_length"] == pytest.approx(2.75)
    cells = live_cells({"live": {"records": [j, j]}})   # a saved record reads back into a cell
    cell = next(iter(cells.values()))
    sd = cell.to_json()["speculative_decoding"]
    assert sd["num_spec_steps"] == 8 and sd["acceptance_histogram"] == [2, 2, 2, 0, 2]


def test_runs_line_and_the_chats_panel_show_the_mean_acceptance_length():
    s = stats_of(_events())
    line = acceptance_text(s.speculative_decoding).plain
    assert "mean acceptance length 2.75" in line and "per-position acceptance rate 0.75 0.50 0.25 0.25" in line
    from rich.console import Console

    console = Console(width=120, record=True, file=open("/dev/null", "w"))
    console.print(render_stats(s))
    panel = console.export_text()
    assert "acc. length   2.75" in panel
