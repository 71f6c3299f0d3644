"""The `gammatune` command: assembles the commands and turns user errors into one line.

Every error a user can cause (a bad flag, a missing model, a corrupt recording)
ends as `gammatune: error: …` on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import os
import sys

import click
import typer

from .commands import bench, chat, compare, doctor, help_format, models, replay, run
from .errors import GammatuneError

try:  # typer >= 0.25 parses with its own copy of click, whose exceptions are other classes
    from typer._click import exceptions as _typer_click
except ImportError:  # pragma: no cover - older typer uses click itself
    _typer_click = click.exceptions

_USAGE_ERRORS = (click.UsageError, _typer_click.UsageError)
_NO_ARGS = (click.exceptions.NoArgsIsHelpError, _typer_click.NoArgsIsHelpError)
_ABORTS = (click.exceptions.Abort, typer.Abort)
_EXITS = (click.exceptions.Exit, typer.Exit)
_CLICK_ERRORS = (click.ClickException, _typer_click.ClickException)

help_format.install()   # flags without `<bool>`, ranges inside the type label

app = typer.Typer(
    name="gammatune",
    help="Watch, tune and compare speculative decoding (GammaTune, GammaTune+) in the terminal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

# One module per command, each registering itself; this order is `gammatune --help`'s.
for _command in (run, models, chat, compare, replay, bench, doctor):
    _command.register(app)


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Prints one line on stderr and returns the Exit to raise."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else "unknown error"
    print(f"gammatune: error: {first}", file=sys.stderr)
    return typer.Exit(code)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        rv = app(args=argv, prog_name="gammatune", standalone_mode=False)
    except _NO_ARGS:
        sys.exit(0)
    except _USAGE_ERRORS as exc:
        name = exc.ctx.info_name if exc.ctx else None
        hint = f" (see `gammatune {name} --help`)" if name and name != "gammatune" else " (see `gammatune --help`)"
        message = " ".join(exc.format_message().split())
        print(f"gammatune: error: {message}{hint}", file=sys.stderr)
        sys.exit(2)
    except _ABORTS:
        print("gammatune: aborted", file=sys.stderr)
        sys.exit(130)
    except _EXITS as exc:
        sys.exit(exc.exit_code)
    except _CLICK_ERRORS as exc:  # e.g. a file option pointing at an unreadable path
        raise SystemExit(fail(exc.format_message(), 2).exit_code) from None
    except GammatuneError as exc:
        raise SystemExit(fail(str(exc), exc.exit_code).exit_code) from None
    except KeyboardInterrupt:
        print("gammatune: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
