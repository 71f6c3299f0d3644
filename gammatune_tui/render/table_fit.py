"""Any Rich table, printed so that no value is cut: at 80 columns, in a pipe, with rows or columns added later.

Rich squeezes a table wider than its console, and a column that may not wrap
then ends in `…`: the ± spread of a speedup, a model's hub id, a share of the
oracle. `fit_table` never lets that happen, for any table,
so that whoever adds a row or a column to a report does not have to think
about widths:

1. a table whose natural width (every cell on one line) fits is left alone;
2. else its decoration goes (no outer edge, no column rules, two spaces
   between columns), which is often enough; else headers also wrap between
   words (`target calls` on two lines), the cells staying whole;
3. else its columns are split over several tables, each repeating the key
   columns (the row labels: the first column, or the first `keys`), titled
   "(1/2)", "(2/2)", the caption under the last;
4. a part that is still too wide (one huge cell) folds its cells onto
   several lines: wrapped, never cut.

`FittingConsole` applies it to every table printed through it; every
command's console is one (`console.make_console`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from rich import box
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text, TextType

KEYS_ATTR = "_fit_keys"
_HUGE = 100_000


def set_keys(table: Table, n: int) -> Table:
    """Says how many leading columns label a row (repeated in every part when the table is split)."""
    setattr(table, KEYS_ATTR, n)
    return table


def natural_width(console: Console, table: Table) -> int:
    """The table's width with every cell on one line."""
    return Measurement.get(console, console.options.update_width(_HUGE), table).maximum


def _title(title: TextType | None, part: int, parts: int) -> TextType | None:
    if title is None or parts == 1:
        return title
    suffix = f" ({part}/{parts})"
    if isinstance(title, Text):
        out = title.copy()
        out.append(suffix)
        return out
    return f"{title}{suffix}"


def _cell_width(console: Console, cell: RenderableType) -> int:
    options = console.options.update_width(_HUGE)
    return Measurement.get(console, options, cell).maximum if not isinstance(cell, str) else \
        Measurement.get(console, options, Text(cell)).maximum


def _header_words(col: Column) -> int:
    header = col.header.plain if isinstance(col.header, Text) else str(col.header)
    return max((cell_len(w) for w in header.split()), default=0)


def _wrapped_headers(console: Console, table: Table, columns: Sequence[Column]) -> list[Column]:
    """Each column as wide as its widest cell (or its header's longest word): headers wrap between words."""
    out = []
    for col in columns:
        cells = max((_cell_width(console, c) for c in col._cells), default=0)
        out.append(dataclasses.replace(col, width=max(cells, _header_words(col), 1), no_wrap=False,
                                       overflow="fold", min_width=None, max_width=None))
    return out


def _rebuild(table: Table, columns: Sequence[Column], *, plain: bool, title: TextType | None,
             caption: TextType | None, fold: bool = False) -> Table:
    t = Table(
        title=title, caption=caption, box=box.SIMPLE_HEAD if plain and table.box is not None else table.box,
        show_header=table.show_header, show_footer=table.show_footer,
        show_edge=False if plain else table.show_edge, show_lines=table.show_lines,
        pad_edge=False if plain else table.pad_edge, padding=(0, 1) if plain else table.padding,
        collapse_padding=True if plain else table.collapse_padding, leading=table.leading, style=table.style,
        row_styles=table.row_styles, header_style=table.header_style, footer_style=table.footer_style,
        border_style=table.border_style, title_style=table.title_style, caption_style=table.caption_style,
        title_justify=table.title_justify, caption_justify=table.caption_justify, highlight=table.highlight,
    )
    for i, col in enumerate(columns):
        folded = dataclasses.replace(col, no_wrap=False, overflow="fold", width=None, max_width=None) if fold else col
        t.columns.append(dataclasses.replace(folded, _index=i))
    t.rows = list(table.rows)
    setattr(t, KEYS_ATTR, getattr(table, KEYS_ATTR, 1))
    return t


def fit_table(console: Console, table: Table, width: int | None = None) -> list[Table]:
    """The table as one or more tables that each fit `width` (default: the console's) without cutting a value."""
    width = width or console.width
    if not table.columns or natural_width(console, table) <= width:
        return [table]
    plain = _rebuild(table, table.columns, plain=True, title=table.title, caption=table.caption)
    if natural_width(console, plain) <= width:
        return [plain]
    columns = _wrapped_headers(console, table, table.columns)
    wrapped = _rebuild(table, columns, plain=True, title=table.title, caption=table.caption)
    if natural_width(console, wrapped) <= width:
        return [wrapped]
    n_keys = max(0, min(getattr(table, KEYS_ATTR, 1), len(columns) - 1))
    keys, rest = columns[:n_keys], columns[n_keys:]
    groups: list[list[Column]] = []
    for col in rest:
        if groups and natural_width(console, _rebuild(table, keys + groups[-1] + [col], plain=True, title=None,
                                                      caption=None)) <= width:
            groups[-1].append(col)
        else:
            groups.append([col])
    parts = []
    for i, group in enumerate(groups, start=1):
        last = i == len(groups)
        part = _rebuild(table, keys + group, plain=True, title=_title(table.title, i, len(groups)),
                        caption=table.caption if last else None)
        if natural_width(console, part) > width:   # one cell wider than the screen: fold it, never cut it
            part = _rebuild(table, keys + group, plain=True, title=part.title, caption=part.caption, fold=True)
        parts.append(part)
    return parts


class FittingConsole(Console):
    """A Console whose `print` of a lone table fits it to the width (`fit_table`) instead of squeezing it."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if len(objects) == 1 and isinstance(objects[0], Table) and kwargs.get("width") is None:
            kwargs.setdefault("soft_wrap", not self.is_terminal)   # a title or caption wraps between words here
            for part in fit_table(self, objects[0]):
                super().print(part, **kwargs)
            return
        super().print(*objects, **kwargs)


__all__ = ["FittingConsole", "fit_table", "natural_width", "set_keys"]
