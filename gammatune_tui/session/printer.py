"""Transcripts and summaries on stdout, without the TUI (`--print`, pipes, CI).

Everything is built as `rich.text.Text` (never markup strings) from token
text passed through `printable()`, so a recording cannot put an escape
sequence, a carriage return or Rich markup on the user's terminal. Colours
follow SPEC §4 (prompt blue, accepted draft green, target red) and appear
only when stdout is a terminal; a pipe gets plain text.
"""

from __future__ import annotations

import sys
from typing import IO, Iterable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..ui.safe_text import printable as _printable
from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from .compare import CompareSummary, MethodRun, summarize
from .stats import RunningStats

PROMPT_STYLE = "bold blue"
DRAFT_STYLE = "green"
TARGET_STYLE = "bold red"
DIM = "dim"


def printable(text: str) -> str:
    """Token text made safe to show: control characters become visible escapes (`\\x1b`).

    The one implementation the TUI uses too (`ui.safe_text`, which has no Textual import).
    """
    return _printable(text)


def make_console(file: IO[str] | None = None, color: bool | None = None, width: int | None = None) -> Console:
    """Colour when the stream is a terminal (or when asked); never markup, emoji or highlighting.

    A pipe gets a 120-column layout so the summary table is not squeezed to 80.
    """
    file = file or sys.stdout
    if width is None and not _isatty(file):
        width = 120
    return Console(
        file=file, force_terminal=color, no_color=(color is False) or None,
        highlight=False, markup=False, emoji=False, soft_wrap=True, width=width,
    )


def _isatty(file: IO[str]) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):
        return False


def header_text(h: SessionHeader) -> Text:
    params = ", ".join(f"{k}={v}" for k, v in h.params.items()
                       if v is not None and k != "gamma0" and not (k == "dynamic_tau" and v is False))
    samp = ", ".join(f"{k}={v}" for k, v in h.sampling.items())
    vers = ", ".join(f"{k} {v}" for k, v in h.versions.items())
    t = Text(style=DIM)
    t.append(printable(f"target {h.target} · draft {h.draft}{' (demo pair)' if h.demo else ''} · {h.device} {h.dtype}\n"))
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
    reason = s.summary.stop_reason if s.summary else "cut off (no summary)"
    return Text(
        f"{s.tokens} tokens in {s.steps} steps · {s.tokens_per_s:.1f} tok/s · α {s.acceptance_rate:.2f}"
        f" · {s.tokens_per_step:.2f} tokens/step · target calls {s.target_calls} · draft calls {s.draft_calls}"
        f" · stopped: {reason}",
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


def summary_table(summary: CompareSummary) -> Table:
    caption = (f"speedup = tok/s ÷ {summary.baseline}'s tok/s" if summary.baseline
               else "speedup needs specdecode among the methods")
    table = Table(title="compare: ranked by tokens/s", title_justify="left", caption=caption,
                  caption_justify="left", show_edge=False, pad_edge=False)
    for col in ("#", "method", "tok/s", "speedup", "α", "tok/step", "target calls", "draft calls", "tokens"):
        if col == "method":
            table.add_column(col, justify="left", no_wrap=True, min_width=19)
        else:
            table.add_column(col, justify="right", min_width=len(col))
    for r in summary.rows:
        table.add_row(
            str(r.rank), Text(printable(r.label)), f"{r.tokens_per_s:.1f}",
            f"{r.speedup:.2f}×" if r.speedup is not None else "–",
            f"{r.acceptance_rate:.2f}", f"{r.tokens_per_step:.2f}", str(r.target_calls), str(r.draft_calls),
            str(r.tokens),
        )
    return table


def lossless_text(summary: CompareSummary) -> Text:
    l = summary.lossless
    style = "green" if l.identical else ("bold red" if l.checked else DIM)
    return Text(printable(l.message), style=style)


def print_session(console: Console, events: Sequence[Event], title: str = "") -> RunningStats:
    stats = RunningStats()
    for ev in events:
        stats.add(ev)
    if title:
        console.rule(Text(printable(title)))
    if stats.header is not None:
        console.print(header_text(stats.header))
    console.print(transcript_text(events))
    console.print(stats_text(stats))
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
            console.print(header_text(ev))
            console.print(transcript_text([ev]), end="")
        elif isinstance(ev, StepEvent):
            piece = transcript_text([ev])
            console.print(piece, end="")
            started = True
        console.file.flush()
    if started or stats.header is not None:
        console.print()
    console.print(stats_text(stats))
    return stats


def print_runs(console: Console, runs: Sequence[MethodRun], *, compare: bool) -> CompareSummary | None:
    """Each session's transcript and stats; for a comparison, the ranked table and lossless check."""
    console.print(legend())
    for run in runs:
        title = run.label if compare else ""
        if not compare and run.header is not None and run.header.turn:
            title = f"turn {run.header.turn + 1}"
        print_session(console, run.events, title)
    if not compare:
        return None
    summary = summarize(runs)
    console.print()
    console.print(summary_table(summary))
    console.print(lossless_text(summary))
    return summary


def print_summary_only(console: Console, runs: Sequence[MethodRun]) -> CompareSummary:
    summary = summarize(runs)
    console.print(summary_table(summary))
    console.print(lossless_text(summary))
    return summary


def final_text(events: Sequence[Event]) -> str:
    """The plain emitted text of a session (for tests and `--print` consumers)."""
    return "".join(t.text for ev in events if isinstance(ev, StepEvent) for t in ev.emitted)


__all__ = [
    "printable", "make_console", "header_text", "transcript_text", "stats_text", "summary_table",
    "lossless_text", "print_session", "print_runs", "print_summary_only", "final_text", "SessionSummary",
]
