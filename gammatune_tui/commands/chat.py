"""`gammatune chat`: the Textual app on a live model pair (the embedded demo pair by default)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from ..errors import InvalidParameter
from .input_checks import check_theme
from .output_paths import check_output_dir, check_outputs, output_file
from .options import CommonOptions, common_options
from .prompt_input import given_prompt, prompt_file_option, stdin_is_piped, system_option
from . import terminal


@common_options()
def chat(
    prompt: Optional[str] = typer.Argument(None, metavar="PROMPT", help="A first prompt, sent as soon as the models are loaded; - or a piped stdin reads it."),
    prompt_file: Optional[Path] = prompt_file_option(),
    system: Optional[str] = system_option(),
    theme: Optional[str] = typer.Option(None, "--theme", metavar="NAME", help="Colour theme: paper (default), okabe-ito, high-contrast, light, or one from $GAMMATUNE_THEMES / ~/.config/gammatune/themes."),
    record: Optional[Path] = typer.Option(None, "--record", metavar="FILE", help="Write every event of the session to this JSONL file (replay it with `gammatune replay`).", parser=output_file),
    pace: float = typer.Option(0.0, "--pace", help="At most this many steps per second, to watch each step and tune while it runs (0 = full speed; F9 changes it in the app). Never counted in the timings.", min=0.0),
    export_dir: Optional[Path] = typer.Option(None, "--export-dir", metavar="DIR", help="Where F2 screenshots and F3 HTML exports go (default: $GAMMATUNE_EXPORT_DIR, else ~/.local/share/gammatune/exports).", file_okay=False),
    *,
    opts: CommonOptions,
) -> None:
    """Chat with a draft/target pair and watch speculative decoding live.

    Prompt tokens are blue, draft tokens the target accepted green, target tokens
    (corrections and bonus) red. Change the method or η, δ, τ, γ bounds while it
    generates; Esc stops; F1 lists every key; Ctrl+P opens the command palette.
    """
    check_theme(theme)   # before the models load, not after
    settings = opts.policy_settings()   # a bad γ, η, δ, τ, --top-p or --temperature: one line before torch loads
    sampling = opts.sampling(demo_defaults=opts.uses_demo)
    from ..session.system_prompt import check_system_flags

    check_system_flags(system, opts.raw)
    from ..bench.sim.hindsight import session_hindsight
    from ..engine.loading.models import check_pair
    from ..session.live import LiveSource
    from ..ui.app import make_app

    if opts.max_new_tokens < 1:
        raise InvalidParameter(f"--max-new-tokens must be a whole number >= 1, got {opts.max_new_tokens}")
    if record is not None:
        check_outputs([("--record", record)], [("--prompt-file", prompt_file)],
                      lambda text: print(text, file=sys.stderr))
    _check_export_dir(export_dir)
    piped = stdin_is_piped()
    prompt = given_prompt(prompt, prompt_file)
    if piped:
        _keyboard_from_terminal()   # the prompt came down the pipe; the app's keys come from the terminal
    source = LiveSource(settings, sampling, load_kwargs=opts.load_kwargs(), max_new_tokens=opts.max_new_tokens,
                        raw=opts.raw, pace=pace, hindsight=session_hindsight, system=system)
    # here, not in the app: the models load in another process, and a typo must not open the app
    check_pair(**opts.load_kwargs())
    app = make_app(source, theme=theme, record=record, prompt=prompt, export_dir=export_dir)   # checks the theme
    terminal.require_terminal("chat")
    app.run()


def _check_export_dir(export_dir: Optional[Path]) -> None:
    """--export-dir or $GAMMATUNE_EXPORT_DIR, when the user named one: writable before the app opens.

    Otherwise the first F2 of a long session would be the one to find out.
    The default folder is not checked: nobody asked for it, and a failed
    export there is still said in the app.
    """
    from ..ui.app import EXPORT_DIR_ENV

    env = os.environ.get(EXPORT_DIR_ENV, "")
    if export_dir is not None:
        check_output_dir(export_dir, "--export-dir")
    elif env.strip():
        check_output_dir(Path(env), EXPORT_DIR_ENV)


def _keyboard_from_terminal() -> None:
    """After reading a piped stdin, give the app the controlling terminal as its stdin (as `less` does)."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise InvalidParameter("chat needs a terminal for its keys, and stdin is a pipe with no terminal behind it: "
                               "use `gammatune run` to generate from a pipe") from None
    try:
        os.dup2(fd, sys.stdin.fileno())
    finally:
        os.close(fd)


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
