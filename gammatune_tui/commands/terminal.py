"""Whether a TUI command (compare, replay) opens its app or prints: a TUI needs a terminal on stdout.

`gammatune compare … | tail` or `gammatune replay all-methods > out.txt`
used to start the Textual app anyway: its escape codes filled the pipe or
the file and the race waited for a key that could never come, so the
command never ended. With stdout not a terminal these commands now print,
as `--print` does, and say so once on stderr.
"""

from __future__ import annotations

import sys


def prints_instead_of_tui(print_: bool, command: str) -> bool:
    """True where `command` should print: `--print` was given, or stdout is not a terminal (then noted on stderr)."""
    if print_:
        return True
    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, ValueError):   # a closed or replaced stdout
        terminal = False
    if not terminal:
        print(f"gammatune: stdout is not a terminal: {command} prints its results (as with --print) "
              "instead of opening the app", file=sys.stderr)
    return not terminal
