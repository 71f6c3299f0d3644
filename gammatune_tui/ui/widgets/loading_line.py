"""The chat's loading line: what preparing the source is doing, or why it could not.

It owns its state: `show_progress(stage, fraction)` draws the stage in words
and the bar beside it (the bar shows the percentage, once); setting `error`
replaces both with the reason, in the error colour. The screen hides the
line once the source is ready.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import var
from textual.widgets import Label, ProgressBar

from ...render.safe_text import one_line


class LoadingLine(Horizontal):
    """"Loading: <stage>" and a progress bar; "Could not prepare: <why>" once `error` is set."""

    error: var[str] = var("", init=False)
    """Why the source could not be prepared ('' while it may still be)."""

    def compose(self) -> ComposeResult:
        yield Label("Preparing…", id="load-label", markup=False)   # it names paths and errors
        yield ProgressBar(total=100, show_eta=False, id="load-bar")

    def show_progress(self, stage: str, fraction: float) -> None:
        pct = max(0.0, min(1.0, fraction)) * 100
        self.query_one("#load-label", Label).update(f"Loading: {one_line(stage)}")
        self.query_one("#load-bar", ProgressBar).update(progress=pct)

    def watch_error(self, error: str) -> None:
        if error:
            self.query_one("#load-bar").display = False
            self.query_one("#load-label", Label).update(f"Could not prepare: {one_line(error)}")
            self.add_class("-error")
