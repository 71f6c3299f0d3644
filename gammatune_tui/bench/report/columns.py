"""Benchmark tables that stay readable at the width they are printed at (80 columns in a pipe).

A Rich table wider than its console squeezes every column and cuts cells
into `deco…`, `veri…`, `1,23…`. A benchmark table is built here from column
specs instead: headers may wrap between words; when even that is too wide,
the short headers are used (the caption says what they mean); when still too
wide, the columns are split over several tables, each repeating the key
columns (the model shape, say) — so a runner column or two more (the GPU
engine adds them) never cuts a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text


@dataclass
class Column:
    header: str                       # the full header (may wrap between words)
    cells: list[Text | str] = field(default_factory=list)
    short: str = ""                   # a short header for narrow consoles (explained in the caption)
    justify: str = "right"
    key: bool = False                 # repeated in every part when the table is split
    meaning: str = ""                 # what the short header stands for, for the caption


def _cells(col: Column) -> list[str]:
    return [c.plain if isinstance(c, Text) else str(c) for c in col.cells]


def _col_width(col: Column, header: str, wrap_header: bool) -> int:
    """A column's width: its widest cell, and its header on one line (or its longest word, when wrapping)."""
    head = max((cell_len(w) for w in header.split()), default=0) if wrap_header else cell_len(header)
    return max([head] + [cell_len(c) for c in _cells(col)] + [1])


def _header(col: Column, short: bool) -> str:
    return (col.short or col.header) if short else col.header


def _width(cols: Sequence[Column], short: bool, wrap: bool) -> int:
    """The table's width with every column at `_col_width`: columns + borders and padding."""
    return sum(_col_width(c, _header(c, short), wrap) for c in cols) + 3 * len(cols) + 1


def _table(title: str, cols: Sequence[Column], short: bool, wrap: bool, caption: str | None) -> Table:
    t = Table(title=Text(title), title_justify="left", caption=caption, caption_justify="left")
    for c in cols:
        header = _header(c, short)
        t.add_column(header, justify=c.justify, width=_col_width(c, header, wrap),  # type: ignore[arg-type]
                     no_wrap=not wrap)
    for i in range(max((len(c.cells) for c in cols), default=0)):
        t.add_row(*(c.cells[i] if i < len(c.cells) else "" for c in cols))
    return t


def fit_tables(title: str, columns: Sequence[Column], width: int, caption: str | None = None) -> list[Table]:
    """One table when it fits `width` (headers on one line, else wrapped between words); else with the
    short headers; else split into parts that each fit, every part repeating the key columns."""
    for wrap in (False, True):
        if _width(columns, short=False, wrap=wrap) <= width:
            return [_table(title, columns, False, wrap, caption)]
    legend = "; ".join(f"{c.short} = {c.meaning or c.header}" for c in columns if c.short and c.short != c.header)
    caption_short = "; ".join(x for x in (legend, caption) if x) or None
    if _width(columns, short=True, wrap=True) <= width:
        return [_table(title, columns, True, True, caption_short)]
    keys = [c for c in columns if c.key]
    rest = [c for c in columns if not c.key]
    parts: list[list[Column]] = []
    current: list[Column] = []
    for c in rest:
        if current and _width(keys + current + [c], short=True, wrap=True) > width:
            parts.append(current)
            current = []
        current.append(c)
    if current:
        parts.append(current)
    tables = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        tables.append(_table(f"{title} ({i + 1}/{len(parts)})", keys + part, True, True,
                             caption_short if last else None))
    return tables


def print_fitted(console: Console, title: str, columns: Sequence[Column], caption: str | None = None) -> None:
    for t in fit_tables(title, columns, console.width, caption):
        console.print(t)


def human_count(n: float) -> str:
    """12_345_678 → '12M', 1_235_814_400 → '1.2B': parameter counts short enough for a narrow column."""
    if n >= 1e9:
        return f"{n / 1e9:.1f}B"
    if n >= 1e6:
        return f"{n / 1e6:.0f}M"
    if n >= 1e3:
        return f"{n / 1e3:.0f}K"
    return str(int(n))


__all__ = ["Column", "fit_tables", "print_fitted", "human_count"]
