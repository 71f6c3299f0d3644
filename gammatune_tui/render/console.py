"""The one way a command makes a Rich console: colour only on a terminal, no markup, a pipe at full width.

Kept apart from printer.py (which imports the session floor) so that a
command that only prints a table, such as `gammatune models`, loads no torch.
"""

from __future__ import annotations

import sys
from typing import IO

from rich.console import Console

from .table_fit import FittingConsole


def make_console(file: IO[str] | None = None, color: bool | None = None, width: int | None = None) -> Console:
    """Colour when the stream is a terminal (or when asked); never markup, emoji or highlighting.

    Tables printed through it are fitted to its width without cutting a value (table_fit.py).

    A pipe gets a 120-column layout so the summary table is not squeezed to 80.
    """
    file = file or sys.stdout
    if width is None and not _isatty(file):
        width = 120
    return FittingConsole(
        file=file, force_terminal=color, no_color=(color is False) or None,
        highlight=False, markup=False, emoji=False, soft_wrap=True, width=width,
    )


def has_colour(console: Console) -> bool:
    """Whether this console draws colours (a terminal without NO_COLOR, or forced): the legend is for those."""
    return console.color_system is not None and not console.no_color


def _isatty(file: IO[str]) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):
        return False
