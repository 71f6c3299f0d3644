"""The chat screen's view keys (shading, chart history, inspector, HTML export) and its palette entries.

A mixin so the screen module keeps to events and turns; it needs `transcript`,
`chart`, `inspector`, `read_only`, `select_step()`, `set_method()`,
`action_stop()` and `notify()` from the screen, and the app's `export_dir`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterable

from textual.app import SystemCommand

from ...engine.policies import METHODS


class ChatActions:
    """F3 export, F4 shading, F5 chart history, F7 inspector; the command palette's chat entries."""

    def action_toggle_shade(self) -> None:
        ts = self.transcript
        ts.shade = not ts.shade
        self.notify("Draft tokens shaded by the draft's confidence" if ts.shade else "Confidence shading off",
                    timeout=2)

    def action_toggle_history(self) -> None:
        self.chart.full_history = not self.chart.full_history

    def action_toggle_inspector(self) -> None:
        self.inspector.display = not self.inspector.display

    def action_export_html(self) -> Path | None:
        path = self.app.export_dir / time.strftime("gammatune-%Y%m%d-%H%M%S.html")
        try:
            path.write_text(self.transcript.export_html(), encoding="utf-8")
        except OSError as exc:
            self.notify(f"Could not write {path}: {exc.strerror or exc}", severity="error")
            return None
        self.notify(f"Transcript saved to {path}", title="Export")
        return path

    def system_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette (the app adds help, themes and quit)."""
        yield SystemCommand("Stop generation", "End the running generation at the next step (Esc)", self.action_stop)
        yield SystemCommand("Export transcript to HTML", "Write the coloured transcript to an .html file (F3)",
                            self.action_export_html)
        yield SystemCommand("Toggle confidence shading", "Shade draft tokens by the draft's confidence (F4)",
                            self.action_toggle_shade)
        yield SystemCommand("Toggle chart history", "Last steps or the whole session in the chart (F5)",
                            self.action_toggle_history)
        yield SystemCommand("Toggle step inspector", "Show or hide the step inspector (F7)",
                            self.action_toggle_inspector)
        yield SystemCommand("Inspect latest step", "Let the inspector follow the newest step again",
                            lambda: self.select_step(None))
        yield SystemCommand("Focus prompt", "Move the cursor to the prompt box", lambda: self.query_one("#prompt").focus())
        yield SystemCommand("Focus controls", "Move the cursor to the policy controls",
                            lambda: self.query_one("#ctl-method").focus())
        if not self.read_only:
            for m in METHODS:
                yield SystemCommand(f"Method: {m}", f"Switch the γ policy to {m} from the next step",
                                    lambda m=m: self.set_method(m))
