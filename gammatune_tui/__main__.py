"""The `gammatune` command's entry point, for the console script and `python -m gammatune_tui`.

Importing the CLI (typer, click, every command's options) takes about a
tenth of a second; a Ctrl+C in that time would otherwise print a
KeyboardInterrupt traceback. So the console script points here (pyproject's
[project.scripts]), at a function that imports nothing heavy until it is
inside its own `try`.
"""

import sys


def main(argv: "list[str] | None" = None) -> None:
    """Runs `gammatune` with `argv` (default: the process's arguments); Ctrl+C while it starts is one line, 130."""
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        print("gammatune: interrupted", file=sys.stderr)
        sys.exit(130)
    cli_main(argv)


if __name__ == "__main__":
    main()
