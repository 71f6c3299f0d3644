"""The `gammatune` command: assembles the commands and turns user errors into one line.

Every error a user can cause (a bad flag, a missing model, a corrupt recording)
ends as `gammatune: error: …` on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys

import click
import typer

from .errors import GammatuneError

app = typer.Typer(
    name="gammatune",
    help="Watch, tune and compare speculative decoding (GammaTune, GammaTune+) in the terminal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

# Each module registers its command(s) on `app` when imported; a module that is
# not written yet is simply absent from the CLI.
COMMAND_MODULES = ("run", "models", "chat", "compare", "replay", "bench")
for _name in COMMAND_MODULES:
    try:
        importlib.import_module(f"{__package__}.commands.{_name}").register(app)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.commands.{_name}":
            raise


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Prints one line on stderr and returns the Exit to raise."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else "unknown error"
    print(f"gammatune: error: {first}", file=sys.stderr)
    return typer.Exit(code)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        rv = app(args=argv, prog_name="gammatune", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError:
        sys.exit(0)
    except click.UsageError as exc:
        hint = f" (see `gammatune {exc.ctx.info_name} --help`)" if exc.ctx and exc.ctx.info_name != "gammatune" else " (see `gammatune --help`)"
        print(f"gammatune: error: {exc.format_message()}{hint}", file=sys.stderr)
        sys.exit(2)
    except click.exceptions.Abort:
        print("gammatune: aborted", file=sys.stderr)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
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
