"""Summary tables and lines shared by the TUI and the commands: compare's ranking, a run's totals."""

from __future__ import annotations

from typing import Any, Iterator

from rich.table import Table
from rich.text import Text

from ..engine.events import SessionSummary
from ..session.compare import CompareSummary
from .safe_text import printable


def shown_params(params: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """A header's policy parameters worth showing: set ones, without γ0 (shown apart) and an unset dynamic τ."""
    for k, v in params.items():
        if v is not None and k != "gamma0" and not (k == "dynamic_tau" and v is False):
            yield k, v


def summary_table(summary: CompareSummary) -> Table:
    """Compare's methods ranked by tokens/s, with the speedup over specdecode when it ran."""
    caption = (f"speedup = tok/s ÷ {summary.baseline}'s tok/s" if summary.baseline
               else "speedup needs specdecode among the methods")
    table = Table(title="compare: ranked by tokens/s", title_justify="left", caption=caption,
                  caption_justify="left", show_edge=False, pad_edge=False)
    for col in ("#", "method", "tok/s", "speedup", "α", "tok/step", "target calls", "draft calls", "tokens"):
        if col == "method":
            table.add_column(col, justify="left", no_wrap=True, min_width=19)
        else:
            table.add_column(col, justify="right", min_width=len(col))
    for r in summary.rows:
        table.add_row(
            str(r.rank), Text(printable(r.label)), f"{r.tokens_per_s:.1f}",
            f"{r.speedup:.2f}×" if r.speedup is not None else "–",
            f"{r.acceptance_rate:.2f}", f"{r.tokens_per_step:.2f}", str(r.target_calls), str(r.draft_calls),
            str(r.tokens),
        )
    return table


def lossless_text(summary: CompareSummary) -> Text:
    """Compare's greedy check, green when every method gave the same tokens."""
    verdict = summary.lossless
    style = "green" if verdict.identical else ("bold red" if verdict.checked else "dim")
    return Text(printable(verdict.message), style=style)


def run_summary_table(s: SessionSummary) -> Table:
    """`gammatune run`'s closing table: one session's totals, and which source drafted."""
    table = Table(title="run summary", title_justify="left", show_edge=False, pad_edge=False)
    for col in ("tokens", "steps", "α", "tokens/step", "tokens/s", "target calls", "draft calls", "drafter", "stop"):
        table.add_column(col, justify="right" if col not in ("stop", "drafter") else "left")
    table.add_row(
        str(s.tokens), str(s.steps), f"{s.acceptance_rate:.2f}", f"{s.tokens_per_step:.2f}",
        f"{s.tokens_per_s:.1f}", str(s.target_calls), str(s.draft_calls), printable(s.drafter or "model"),
        s.stop_reason,
    )
    return table
