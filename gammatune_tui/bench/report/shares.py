"""The shares-of-the-oracle table with reference rows, spreads and the ranks the spreads allow.

Printed through `table_fit` so it stays whole at 80 columns and in a pipe;
shared by `bench --simulate`, `--tune` and `doctor`.
"""

from __future__ import annotations

from typing import Sequence

from rich.console import Console
from rich.text import Text

from ..sim.reference import ShareRow
from .columns import Column, print_fitted

CAPTION = ("share = throughput over the oracle's (methods: mean over γ0); ± passes = largest change when each "
           "timing pass prices it instead of the pool; ± prompts = std across prompts; ranks differ only where "
           "the gap exceeds the spread (pass spread + standard error over prompts); reference rows in italics")


def share_columns(rows: Sequence[ShareRow]) -> list[Column]:
    style = {True: "italic", False: ""}
    return [
        Column("rank", [Text(r.rank) for r in rows], justify="right"),
        Column("method or reference", [Text(r.label, style=style[r.reference]) for r in rows], short="method",
               justify="left", key=True),
        Column("share of oracle", [Text(f"{r.share:.3f}") for r in rows], short="share"),
        Column("± passes", [Text(f"{r.pass_spread:.3f}") for r in rows], short="±pass",
               meaning="spread across timing passes"),
        Column("± prompts", [Text(f"{r.prompt_std:.3f}") for r in rows], short="±prm",
               meaning="std across prompts"),
    ]


def print_shares(console: Console, rows: Sequence[ShareRow], title: str, passes: int) -> None:
    print_fitted(console, title, share_columns(rows), CAPTION + f" ({passes} timing passes)")


__all__ = ["CAPTION", "print_shares", "share_columns"]
