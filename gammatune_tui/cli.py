"""The `gammatune` command: assembles the commands and turns user errors into one line.

Every error a user can cause (a bad flag, a missing model, a corrupt recording)
ends as `gammatune: error: …` on stderr with exit status 2, never a traceback.
Ctrl+C ends as `gammatune: interrupted …` (what was done and kept) with exit
status 130; a reader that closes the pipe (`… | head -1`) ends the command
quietly with status 0, as `cat` and `git` do.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import types
from typing import Any, Callable, NoReturn

import click
import typer

from .commands import bench, chat, compare, doctor, help_format, models, replay, run
from .errors import GammatuneError, Interrupted

_typer_click: types.ModuleType
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


def _interruptible(callback: Callable[..., Any]) -> Callable[..., Any]:
    """Ctrl+C in a command's body becomes `Interrupted` (typer would turn it into a silent exit 130)."""
    @functools.wraps(callback)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted("") from None
    return wrapper


for _info in app.registered_commands:
    if _info.callback is not None:
        _info.callback = _interruptible(_info.callback)
        if _info.help is None and _info.callback.__doc__:
            _info.help = help_format.reflow(_info.callback.__doc__)


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Prints one line on stderr and returns the Exit to raise."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else "unknown error"
    print(f"gammatune: error: {first}", file=sys.stderr)
    return typer.Exit(code)


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether `exc` was raised while handling a `kind` (click and Rich turn a closed pipe or a Ctrl+C into exits)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, kind):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def _stdout_closed() -> NoReturn:
    """The reader went away: point stdout at devnull (so the exit's flush cannot fail) and exit 0, silently."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    sys.exit(0)


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)   # a write the disk or device refused


def _output_full(exc: OSError) -> NoReturn:
    """stdout on a full disk (`> /dev/full`): one line, and a null stdout so the exit's flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    name = f" {exc.filename}" if exc.filename else " the output"
    print(f"gammatune: error: cannot write{name}: {exc.strerror or exc}", file=sys.stderr)
    sys.exit(2)


def _interrupted(message: str = "") -> NoReturn:
    if sys.stderr.isatty():   # after the terminal's ^C, on a line of its own
        print(file=sys.stderr)
    print(f"gammatune: interrupted — {message}" if message else "gammatune: interrupted", file=sys.stderr)
    sys.exit(130)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        _main(argv)
    except SystemExit as exc:
        # click exits 1 on EPIPE and Rich exits 1 from its broken-pipe hook: both are a closed reader
        if exc.code not in (0, None) and _caused_by(exc, BrokenPipeError):
            _stdout_closed()
        raise
    except BrokenPipeError:
        _stdout_closed()
    except KeyboardInterrupt:
        _interrupted()


def _main(argv: list[str] | None) -> None:
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
    except _ABORTS as exc:
        if _caused_by(exc, KeyboardInterrupt):   # click turns Ctrl+C into Abort
            _interrupted()
        print("gammatune: aborted", file=sys.stderr)
        sys.exit(130)
    except _EXITS as exc:
        sys.exit(exc.exit_code)
    except _CLICK_ERRORS as exc:  # e.g. a file option pointing at an unreadable path
        raise SystemExit(fail(exc.format_message(), 2).exit_code) from None
    except Interrupted as exc:
        _interrupted(str(exc))
    except GammatuneError as exc:
        raise SystemExit(fail(str(exc), exc.exit_code).exit_code) from None
    except BrokenPipeError:
        _stdout_closed()
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        _output_full(exc)
    if rv == 130:   # typer's answer to a Ctrl+C while it parsed (the body's own are `Interrupted`)
        _interrupted()
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
