"""`gammatune chat`: the Textual app on a live model pair (the embedded demo pair by default)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..bench.hindsight import session_hindsight
from ..resources import require_demo_pair
from ..session.live import LiveSource
from ..ui.app import make_app
from .options import common_options


@common_options()
def chat(
    prompt: Optional[str] = typer.Argument(None, help="A first prompt, sent as soon as the models are loaded."),
    theme: Optional[str] = typer.Option(None, "--theme", help="Colour theme: paper (default), okabe-ito, high-contrast, light, or one from $GAMMATUNE_THEMES / ~/.config/gammatune/themes."),
    record: Optional[Path] = typer.Option(None, "--record", help="Write every event of the session to this JSONL file (replay it with `gammatune replay`).", dir_okay=False),
    *,
    opts,
) -> None:
    """Chat with a draft/target pair and watch speculative decoding live.

    Prompt tokens are blue, draft tokens the target accepted green, target tokens
    (corrections and bonus) red. Change the method or η, δ, τ, γ bounds while it
    generates; Esc stops; F1 lists every key; Ctrl+P opens the command palette.
    """
    settings = opts.policy_settings()
    sampling = opts.sampling(demo_defaults=opts.uses_demo)
    if opts.uses_demo:
        require_demo_pair()   # here, not in the app: the models load in another process
    source = LiveSource(settings, sampling, load_kwargs=opts.load_kwargs(), max_new_tokens=opts.max_new_tokens,
                        raw=opts.raw, hindsight=session_hindsight)
    make_app(source, theme=theme, record=record, prompt=prompt).run()


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
