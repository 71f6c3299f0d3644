"""Sessions on stdout, without the TUI (`gammatune run`, `compare --print`, `replay --print`, pipes, CI).

Everything is built as `rich.text.Text` (never markup strings) from token
text passed through `printable()`, so a recording cannot put an escape
sequence, a carriage return or Rich markup on the user's terminal. Colours
follow docs/spec.md §4 (prompt blue, accepted draft green, target red) and appear
only when stdout is a terminal; a pipe gets plain text.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from rich.console import Console
from rich.text import Text

from ..engine.events import Event, SessionHeader, StepEvent
from ..session.compare import CompareSummary, MethodRun, summarize
from ..session.replay import Playlist, ReplaySource
from ..session.stats import RunningStats, stats_of
from .console import has_colour, make_console  # noqa: F401  (re-exported)
from .safe_text import printable
from ..engine.events.precision_text import header_models
from .session_info import runner_note
from .stop_words import stop_words
from .tables import as_flag, backfire_text, lossless_text, shown_params, summary_table

PROMPT_STYLE = "bold blue"
DRAFT_STYLE = "green"
TARGET_STYLE = "bold red"
DIM = "dim"


def header_text(h: SessionHeader) -> Text:
    # in the command line's own words (`--eta 0.7`, `--top-p 0.9`): what a user can copy into the next command
    params = " ".join(as_flag(k, v) for k, v in shown_params(h.params, h.method))
    samp = " ".join(as_flag(k, v) for k, v in h.sampling.items() if k != "seed")   # the seed is shown once, below
    vers = ", ".join(f"{k} {v}" for k, v in h.versions.items())
    t = Text(style=DIM)
    t.append(printable(f"{header_models(h)}{' (demo pair)' if h.demo else ''} · {h.device}"
                       f"{'' if h.target_precision else ' ' + h.dtype}"
                       f"{runner_note(h)}\n"))
    t.append(printable(f"{h.method} γ0={h.gamma0}{' · ' + params if params else ''} · {samp or 'greedy'}"
                       f" · seed {h.seed} · max {h.max_new_tokens} tokens"))
    if vers:
        t.append(printable(f"\n{vers}"))
    return t


def transcript_text(events: Sequence[Event]) -> Text:
    """The prompt in blue, then each emitted token coloured by who produced it."""
    t = Text()
    for ev in events:
        if isinstance(ev, SessionHeader):
            if len(t):
                t.append("\n")
            t.append(printable(ev.user_text or ev.prompt), style=PROMPT_STYLE)
            t.append("\n")
        elif isinstance(ev, StepEvent):
            for tok in ev.emitted:
                t.append(printable(tok.text), style=DRAFT_STYLE if tok.source == "draft" else TARGET_STYLE)
    return t


def stats_text(stats: RunningStats) -> Text:
    s = stats
    reason = stop_words(s.summary.stop_reason if s.summary else None)
    return Text(
        f"{s.tokens} tokens in {s.steps} steps · {s.tokens_per_s:.1f} tok/s · α {s.acceptance_rate:.2f}"
        f" · {s.tokens_per_step:.2f} tokens/step · target calls {s.target_calls} · draft calls {s.draft_calls}"
        f" · {reason}",
        style=DIM,
    )


def legend() -> Text:
    t = Text("colours: ", style=DIM)
    t.append("prompt", style=PROMPT_STYLE)
    t.append(" · ", style=DIM)
    t.append("draft, accepted", style=DRAFT_STYLE)
    t.append(" · ", style=DIM)
    t.append("target (correction / bonus)", style=TARGET_STYLE)
    return t


def print_session(console: Console, events: Sequence[Event], title: str = "") -> RunningStats:
    stats = stats_of(events)
    if title:
        console.rule(Text(printable(title)))
    if stats.header is not None:
        console.print(header_text(stats.header), soft_wrap=not console.is_terminal)
    console.print(transcript_text(events))
    console.print(stats_text(stats), soft_wrap=not console.is_terminal)
    return stats


def stream_session(console: Console, events: Iterable[Event], title: str = "") -> RunningStats:
    """Like `print_session`, but each step is written as it arrives (a paced replay on a terminal)."""
    stats = RunningStats()
    if title:
        console.rule(Text(printable(title)))
    started = False
    for ev in events:
        stats.add(ev)
        if isinstance(ev, SessionHeader):
            console.print(header_text(ev), soft_wrap=not console.is_terminal)
            console.print(transcript_text([ev]), end="")
        elif isinstance(ev, StepEvent):
            piece = transcript_text([ev])
            console.print(piece, end="")
            started = True
        console.file.flush()
    if started or stats.header is not None:
        console.print()
    console.print(stats_text(stats), soft_wrap=not console.is_terminal)
    return stats


def print_runs(console: Console, runs: Sequence[MethodRun], *, compare: bool,
               summary: CompareSummary | None = None) -> CompareSummary | None:
    """Each session's transcript and stats; for a comparison, the ranked table (`summary`, or one made from
    the runs) and the lossless check. The colour legend only when there is colour to explain."""
    if has_colour(console):
        console.print(legend())
    for run in runs:
        title = run.label if compare else ""
        if not compare and run.header is not None and run.header.turn:
            title = f"turn {run.header.turn + 1}"
        print_session(console, run.events, title)
    if not compare:
        return None
    summary = summary or summarize(runs)
    console.print()
    console.print(summary_table(summary))   # every column; the console splits it if it is too wide
    console.print(lossless_text(summary), soft_wrap=not console.is_terminal)
    warning = backfire_text(summary)
    if warning is not None:
        console.print(warning, soft_wrap=not console.is_terminal)
    return summary


def print_playlist(playlist: Playlist, speed: float, console: Console | None = None) -> None:
    """`replay --print`: on a terminal one recording streams at its recorded pace (speed 0: at once)."""
    console = console or make_console()
    if not (speed > 0 and console.is_terminal and not playlist.compare):
        print_runs(console, playlist.runs, compare=playlist.compare)
        return
    if has_colour(console):
        console.print(legend())
    source = ReplaySource(playlist.recordings[0], speed=speed)
    n = 0
    while source.has_next_session:
        stream_session(console, source.events(None), title=f"turn {n + 1}" if n else "")
        n += 1


__all__ = [
    "make_console", "has_colour", "header_text", "transcript_text", "stats_text", "legend", "print_session",
    "stream_session", "print_runs", "print_playlist",
]
