"""`gammatune replay`: play recordings back — in the replay screen, side by side, or on stdout.

Needs no model: a recording carries every token, probability and timing.
Every file is read and validated before anything is shown, so a damaged file
gives one line naming it and the line (exit 2) instead of a half-drawn screen.
"""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from .input_checks import check_theme
from .terminal import prints_instead_of_tui


def replay(
    files: List[str] = typer.Argument(..., metavar="FILE...", help="Recording(s) (.jsonl), or a shipped demo's name (e.g. all-methods). Several files open side by side."),
    speed: float = typer.Option(1.0, "--speed", "-s", help="Playback speed: 2 = twice as fast, 0 = no waiting."),
    print_: bool = typer.Option(False, "--print", "-p", help="Print transcripts and summary to stdout instead of opening the TUI (coloured on a terminal, plain in a pipe)."),
    paused: bool = typer.Option(False, "--paused", help="Open the player paused (space plays)."),
    theme: Optional[str] = typer.Option(None, "--theme", metavar="NAME", help="Colour theme of the TUI."),
) -> None:
    """Replay a recording from `run --record`, `chat --record` or `compare --record` (no model needed).

    In the TUI: space pauses/resumes, . / , step forward/back, + / - change speed, e jumps to the end;
    side by side, the sessions race at their recorded pace (r races again).
    """
    from ..render.printer import print_playlist
    from ..session.pacing import check_speed
    from ..session.replay import open_playlist

    speed = check_speed(speed)
    check_theme(theme)   # with --print too: a typo is said, not ignored
    playlist = open_playlist(files)
    for warning in playlist.warnings:
        print(f"gammatune: warning: {warning}", file=sys.stderr)
    if prints_instead_of_tui(print_, "replay"):
        print_playlist(playlist, speed)
    elif playlist.compare:
        from ..ui.app import make_compare_replay_app

        make_compare_replay_app(playlist.runs, speed=speed, paused=paused, theme=theme, title=playlist.title,
                                warnings=playlist.warnings).run()
    else:
        from ..ui.app import make_replay_app

        make_replay_app(playlist.recordings[0], speed=speed, paused=paused, theme=theme).run()


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
