"""Whether a TUI command opens its app: the app needs a terminal on stdout (compare and replay print instead, chat refuses).

`gammatune compare … | tail` or `gammatune replay all-methods > out.txt`
used to start the Textual app anyway: its escape codes filled the pipe or
the file and the race waited for a key that could never come, so the
command never ended. With stdout not a terminal these commands now print,
as `--print` does, and say so once on stderr; `chat`, which has nothing
to print, says in one line to use `gammatune run`.
"""

from __future__ import annotations

import sys

from ..errors import InvalidParameter


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):   # a closed or replaced stdout
        return False


def require_terminal(command: str) -> None:
    """One line (exit 2) instead of an app drawn into a pipe or a file that never ends."""
    if not stdout_is_terminal():
        raise InvalidParameter(f"{command} draws its app on a terminal, and stdout is not one (a pipe or a file): "
                               "use `gammatune run` to generate into a pipe (--json for the event stream)")


def prints_instead_of_tui(print_: bool, command: str) -> bool:
    """True where `command` should print: `--print` was given, or stdout is not a terminal (then noted on stderr)."""
    if print_:
        return True
    terminal = stdout_is_terminal()
    if not terminal:
        print(f"gammatune: stdout is not a terminal: {command} prints its results (as with --print) "
              "instead of opening the app", file=sys.stderr)
    return not terminal
