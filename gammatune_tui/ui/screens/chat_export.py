"""What the chat hands out of the app: F3's HTML page, and Ctrl+Y / Ctrl+T's plain-text copies.

`ChatExport` reads what the screen shows (its `SessionLog` and transcript)
and owns nothing else: the HTML export prints the title and a colour legend
before the transcript and each session's settings, changes and statistics
after it; the copy keys hand the last answer or the whole transcript as
plain text (`render.plain_text`) to Textual's clipboard (OSC 52, which most
terminals pass to the system clipboard). Replay shares it with the chat.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from rich.text import Text
from textual.app import SystemCommand

from ...render.change_marks import change_list
from ...render.plain_text import answer_text, conversation_text
from ...render.safe_text import one_line
from ...render.session_info import settings_line
from ...session.session_log import SessionLog
from ...session.source import EventSource
from ..widgets.stats_panel import render_stats
from ..widgets.token_stream import TokenStream
from .base import GammaScreen
from .clipboard import copy_with_notice, saved_with_notice
from .help import colour_key


class ChatExport:
    """The export and copy actions of a chat `screen` showing `log` from `source` (see the module docstring)."""

    def __init__(self, screen: GammaScreen, log: SessionLog, source: EventSource) -> None:
        self.screen = screen
        self.log = log
        self.source = source

    def parts(self) -> tuple[list, list]:
        """What the HTML export prints before the transcript (title, legend) and after it (each session's settings and stats)."""
        roles = self.screen.host.gamma_theme.roles
        title = Text(f"gammatune · {one_line(self.source.title)}", style="bold")
        legend = colour_key(Text("Colours: "), roles, "prompt", "draft tokens the target accepted",
                            "tokens from the target (corrections and bonus)")
        after: list = []
        for k, (stats, (_h, steps, _s)) in enumerate(zip(self.log.sessions, self.log.turns())):
            h = stats.header
            name = (one_line(h.label) if h.label else f"turn {h.turn + 1}") if h is not None else f"session {k + 1}"
            after += [Text(""), Text(f"{name}: statistics", style="bold")]
            if h is not None:
                after.append(Text(f"settings: {settings_line(h)}", style="dim"))
            changes = change_list(steps, h)
            if changes:   # where the user changed the method or a parameter mid-answer (marked ⟦…⟧ above)
                after.append(Text("changed at " + " · ".join(changes), style="dim"))
            after.append(render_stats(stats))
        return [title, legend, Text("")], after

    def export_html(self) -> Path | None:
        """F3: the transcript, legend, settings and statistics as a new .html file in the export folder."""
        screen, host = self.screen, self.screen.host

        def write() -> Path:
            path = host.export_path(".html")
            before, after = self.parts()
            transcript = screen.query_one("#transcript", TokenStream)
            path.write_text(transcript.export_html(before=before, after=after), encoding="utf-8")
            return path

        saved = saved_with_notice(screen, write, "Could not write the export", host.export_dir, "Transcript saved to",
                                  "Export")
        return Path(saved) if saved is not None else None

    def copy_answer(self) -> str:
        """Ctrl+Y: the last answer as plain text (returned: tests read it)."""
        turns = self.log.turns()
        if not turns:
            self.screen.notify("Nothing to copy yet: no answer has started.", severity="warning", timeout=3)
            return ""
        return copy_with_notice(self.screen, answer_text(turns[-1][1], turns[-1][2]), "the last answer")

    def copy_transcript(self) -> str:
        """Ctrl+T: every turn as plain text."""
        turns = self.log.turns()
        if not turns:
            self.screen.notify("Nothing to copy yet: the transcript is empty.", severity="warning", timeout=3)
            return ""
        return copy_with_notice(self.screen, conversation_text(turns),
                                f"the whole transcript ({len(turns)} turn{'s' * (len(turns) != 1)})")

    def commands(self) -> Iterable[SystemCommand]:
        """Its entries in the command palette."""
        yield SystemCommand("Export transcript to HTML", "Transcript, legend, settings and statistics as .html (F3)",
                            self.export_html)
        yield SystemCommand("Copy last answer", "The last answer as plain text to the clipboard (Ctrl+Y)",
                            self.copy_answer)
        yield SystemCommand("Copy whole transcript", "Every turn as plain text to the clipboard (Ctrl+T)",
                            self.copy_transcript)
