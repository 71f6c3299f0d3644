"""Bench's baseline rows count what they ran: target-only's target calls, transformers' steps (forward passes)."""

from __future__ import annotations

from rich.console import Console

from gammatune_tui.bench.live.protocol import PromptIds, run_hf_assisted, run_hf_lookup, run_plain
from gammatune_tui.bench.report.tables import render_methods
from gammatune_tui.bench.results import HF_LOOKUP, RunRecord, aggregate


def _prompt(pair):
    return PromptIds("p", pair.encode_prompt("abcabcabcabc", raw=True))


def test_target_only_counts_one_target_call_per_token(tiny_pair):
    r = run_plain(tiny_pair, _prompt(tiny_pair), 10)
    assert r.tokens == r.steps == r.target_calls > 0
    assert r.to_json()["target_calls"] == r.tokens


def test_transformers_rows_count_their_steps(tiny_pair):
    look = run_hf_lookup(tiny_pair, 4, 2, _prompt(tiny_pair), 12)
    assert 0 < look.steps <= look.tokens and look.target_calls == look.steps
    assisted = run_hf_assisted(tiny_pair, "constant", 4, 0.0, _prompt(tiny_pair), 12)
    assert 0 < assisted.steps <= assisted.tokens and assisted.draft_calls > 0


def test_a_row_without_steps_shows_a_dash_not_zero():
    cells = aggregate([RunRecord(method=HF_LOOKUP, gamma0=4, prompt_id="p", tokens=10, wall_s=1.0)])
    console = Console(width=160, record=True)
    console.print(render_methods(cells, [4]))
    row = next(line for line in console.export_text().splitlines() if HF_LOOKUP in line)
    assert "0.00" not in row and "—" in row
