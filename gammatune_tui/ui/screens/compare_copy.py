"""The compare screen's copy keys: one method's answer (Ctrl+Y) or every method's (Ctrl+T), as plain text.

As in chat and replay (chat_actions.py), through Textual's clipboard (OSC 52);
the text comes from render/plain_text.py. Ctrl+Y takes the method last
chosen — by a click on its pane's transcript or brought into view with 1–9 —
while its pane is on screen, else the leftmost pane: with sampling the
answers differ, and the one in view is the one meant.
"""

from __future__ import annotations

from typing import Iterable

from textual.app import SystemCommand

from ...engine.events import StepEvent
from ...render.plain_text import answer_text, comparison_text
from ...render.safe_text import one_line
from .clipboard import copy_with_notice


class CompareCopy:
    """Mixed into CompareScreen: needs `runs`, `panes`, `first_shown`, `per_page`, `chosen_method`, `notify`, `app`."""

    def _finished_runs(self) -> list:
        return [r for r in self.runs if r.events]

    def on_descendant_focus(self, event) -> None:
        """A click on a pane's transcript chooses its method, as 1–9 does."""
        for i, pane in enumerate(self.panes):
            if event.widget is pane or pane in event.widget.ancestors:
                self.chosen_method = i

    def _run_in_view(self):
        chosen = self.chosen_method
        if chosen is not None and self.first_shown <= chosen < self.first_shown + self.per_page:
            return self.runs[chosen] if chosen < len(self.runs) else None
        return self.runs[self.first_shown] if self.first_shown < len(self.runs) else None

    def action_copy_answer(self) -> str:
        run = self._run_in_view()
        if run is None or not run.events:
            self.notify("Nothing to copy yet: no method has finished measuring.", severity="warning", timeout=3)
            return ""
        steps = [e for e in run.events if isinstance(e, StepEvent)]
        return self._copy(answer_text(steps, run.summary), f"{one_line(run.label)}'s answer")

    def action_copy_all(self) -> str:
        runs = self._finished_runs()
        if not runs:
            self.notify("Nothing to copy yet: no method has finished measuring.", severity="warning", timeout=3)
            return ""
        text = comparison_text([(r.label, [e for e in r.events if isinstance(e, StepEvent)], r.summary)
                                for r in runs])
        return self._copy(text, f"every method's answer ({len(runs)})")

    def _copy(self, text: str, what: str) -> str:
        return copy_with_notice(self, text, what)

    def copy_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Copy answer", "The answer of the method in view as plain text (Ctrl+Y)",
                            self.action_copy_answer)
        yield SystemCommand("Copy every answer", "Each method's answer under its name, as plain text (Ctrl+T)",
                            self.action_copy_all)
