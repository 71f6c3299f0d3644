"""`gammatune replay`: play recordings back — in the chat screen, side by side, or on stdout.

Needs no model: a recording carries every token, probability and timing.
Every file is read and validated before anything is shown, so a damaged file
gives one line naming it and the line (exit 2) instead of a half-drawn screen.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import InvalidParameter, RecordingError
from ..session.compare import MAX_METHODS, MethodRun
from ..session.recording import Recording, read_recording
from ..session.replay import check_speed, is_comparison, resolve_recording, shipped_recordings


def load_recordings(names: list[str]) -> list[Recording]:
    """Reads every file (a bare name finds a shipped demo recording); warnings go to stderr, one line each."""
    out = []
    for name in names:
        path = resolve_recording(name)
        if not path.exists() and not Path(name).suffix:
            shipped = ", ".join(p.stem for p in shipped_recordings())
            raise RecordingError(f"{name}: no such recording" + (f" (shipped demos: {shipped})" if shipped else ""))
        rec = read_recording(path)
        if rec.warning:
            print(f"gammatune: warning: {rec.warning}", file=sys.stderr)
        out.append(rec)
    return out


def runs_of(recordings: list[Recording]) -> tuple[list[MethodRun], bool]:
    """The sessions to show and whether they form a comparison (panes side by side)."""
    if len(recordings) == 1:
        rec = recordings[0]
        return [MethodRun.from_session(s) for s in rec.sessions], is_comparison(rec)
    runs: list[MethodRun] = []
    for rec in recordings:
        for s in rec.sessions:
            runs.append(MethodRun.from_session(s))
    # Panes need distinct names: fall back to the file name where labels collide.
    labels = [r.label for r in runs]
    if len(set(labels)) != len(labels):
        i = 0
        for rec in recordings:
            for s in rec.sessions:
                runs[i].label = f"{rec.path.stem}:{s.header.label or s.header.method}"
                i += 1
    if len(runs) > MAX_METHODS:
        raise InvalidParameter(f"side by side shows at most {MAX_METHODS} sessions; these files hold {len(runs)}")
    return runs, True


def replay(
    files: List[str] = typer.Argument(..., metavar="FILE...", help="Recording(s) (.jsonl), or a shipped demo's name (e.g. five-methods). Several files open side by side."),
    speed: float = typer.Option(1.0, "--speed", "-s", help="Playback speed: 2 = twice as fast, 0 = no waiting."),
    print_: bool = typer.Option(False, "--print", "-p", help="Print transcripts and summary to stdout instead of opening the TUI (coloured on a terminal, plain in a pipe)."),
    paused: bool = typer.Option(False, "--paused", help="Open the player paused (space plays)."),
    theme: Optional[str] = typer.Option(None, "--theme", help="Colour theme of the TUI."),
) -> None:
    """Replay a recording from `run --record`, `chat --record` or `compare --record` (no model needed).

    In the TUI: space pauses/resumes, . / , step forward/back, + / - change speed, e jumps to the end;
    side by side, the sessions race at their recorded pace (r races again).
    """
    speed = check_speed(speed)
    recordings = load_recordings(files)
    runs, compare = runs_of(recordings)
    if print_:
        _print(recordings, runs, compare, speed)
        return
    from ..ui.replay import launch_replay

    launch_replay(recordings, runs, compare, speed=speed, paused=paused, theme=theme)


def _print(recordings: list[Recording], runs: list[MethodRun], compare: bool, speed: float) -> None:
    from ..session.printer import legend, make_console, print_runs, stream_session
    from ..session.replay import ReplaySource

    console = make_console()
    live = speed > 0 and console.is_terminal and not compare
    if not live:
        print_runs(console, runs, compare=compare)
        return
    # On a terminal, a single recording streams at its recorded pace (--speed 0 prints at once).
    console.print(legend())
    source = ReplaySource(recordings[0], speed=speed)
    n = 0
    while source.has_next_session:
        stream_session(console, source.events(None), title=f"turn {n + 1}" if n else "")
        n += 1


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
