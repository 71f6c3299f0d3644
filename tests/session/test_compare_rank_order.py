"""compare's table reads right when rank order and median order part: the caption says why."""

from __future__ import annotations

from gammatune_tui.render.tables import summary_table
from gammatune_tui.session.compare import CompareSummary, Lossless, SummaryRow, spread_ranks


def _row(label: str, speeds: list[float], rank: int) -> SummaryRow:
    med = sorted(speeds)[len(speeds) // 2]
    return SummaryRow(rank=rank, label=label, method=label, tokens=64, tokens_per_s=med, speedup=None,
                      acceptance_rate=0.5, tokens_per_step=2.0, target_calls=32, draft_calls=64, elapsed_s=0.4,
                      stop_reason="max_new_tokens", low=min(speeds), high=max(speeds), runs=len(speeds))


def _caption(speeds: dict[str, list[float]]) -> str:
    ranks = spread_ranks(speeds)
    rows = sorted((_row(k, v, ranks[k]) for k, v in speeds.items()), key=lambda r: (r.rank, -r.tokens_per_s))
    summary = CompareSummary(rows, Lossless(checked=True, identical=True), None, ranked=True, runs=3)
    return str(summary_table(summary).caption)


def test_a_row_below_a_slower_median_is_explained():
    # z beats x clearly (z's slowest 162 > x's fastest 161); y's wide spread overlaps both, so y shares rank 1
    caption = _caption({"z": [162.0, 170.0, 175.0], "x": [150.0, 160.0, 161.0], "y": [100.0, 155.0, 300.0]})
    assert "a row may sit below a slower median" in caption


def test_no_note_when_medians_fall_in_rank_order():
    caption = _caption({"z": [162.0, 170.0, 175.0], "x": [150.0, 160.0, 161.0]})
    assert "slower median" not in caption


def test_a_row_that_drafted_nothing_shows_no_acceptance():
    """Issue 40 row 12e: a contestant that never drafted showed α 0.00, read as every draft rejected."""
    import dataclasses

    rows = [dataclasses.replace(_row("specdecode/lookup", [10.0], 1), drafted=0),
            dataclasses.replace(_row("specdecode/model", [12.0], 1), drafted=8)]
    table = summary_table(CompareSummary(rows, Lossless(checked=True, identical=True), None, ranked=False))
    alpha = next(c for c in table.columns if str(c.header) == "α")
    assert list(alpha._cells) == ["–", "0.50"]


def test_a_self_draft_model_row_is_named_for_the_self_draft():
    """Issue 40 row 12e: with --draft self:int8, the `model` drafter's rows were labelled `…/model`."""
    from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
    from gammatune_tui.session.compare_job import contestant_label

    assert contestant_label("specdecode", DrafterSettings("model"), "self:int8") == "specdecode/self:int8"
    assert contestant_label("specdecode", DrafterSettings("model"), "some/draft") == "specdecode/model"
    assert contestant_label("specdecode", DrafterSettings("prompt-lookup"), "self:int8") == "specdecode/lookup"
