"""The chat screen's view keys: confidence shading, chart history, inspector, HTML export.

A mixin so the screen module keeps to events and turns; it needs `transcript`,
`chart`, `inspector`, `export_dir` and `notify()` from the screen.
"""

from __future__ import annotations

import time
from pathlib import Path


class ViewActions:
    """F3 export, F4 shading, F5 chart history, F7 inspector."""

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
        path = self.export_dir / time.strftime("gammatune-%Y%m%d-%H%M%S.html")
        try:
            path.write_text(self.transcript.export_html(), encoding="utf-8")
        except OSError as exc:
            self.notify(f"Could not write {path}: {exc.strerror or exc}", severity="error")
            return None
        self.notify(f"Transcript saved to {path}", title="Export")
        return path
