"""The compare screen's copy keys: one method's answer (Ctrl+Y) or every method's (Ctrl+T), as plain text.

As in chat and replay (chat_export.py), through Textual's clipboard (OSC 52);
the text comes from render/plain_text.py. Ctrl+Y takes the method last
chosen — by a click on its pane's transcript or brought into view with 1–9 —
while its pane is on screen, else the leftmost pane: with sampling the
answers differ, and the one in view is the one meant.

These are plain functions of the runs and of what is in view; the screen's
copy actions call them and hand the text to the clipboard.
"""

from __future__ import annotations

from typing import Sequence

from ...engine.events import StepEvent
from ...render.plain_text import answer_text, comparison_text
from ...render.safe_text import one_line
from ...session.compare import MethodRun

NOTHING_YET = "Nothing to copy yet: no method has finished measuring."


def run_in_view(runs: Sequence[MethodRun], chosen: int | None, first_shown: int, per_page: int) -> MethodRun | None:
    """The run Ctrl+Y copies: the method last chosen while its pane is on screen, else the leftmost pane's."""
    if chosen is not None and first_shown <= chosen < first_shown + per_page:
        return runs[chosen] if chosen < len(runs) else None
    return runs[first_shown] if first_shown < len(runs) else None


def one_answer(run: MethodRun | None) -> tuple[str, str] | None:
    """(the run's answer as plain text, what it is in words); None while it has none."""
    if run is None or not run.events:
        return None
    steps = [e for e in run.events if isinstance(e, StepEvent)]
    return answer_text(steps, run.summary), f"{one_line(run.label)}'s answer"


def every_answer(runs: Sequence[MethodRun]) -> tuple[str, str] | None:
    """(each finished run's answer under its name, what it is in words); None while none has finished."""
    done = [r for r in runs if r.events]
    if not done:
        return None
    text = comparison_text([(r.label, [e for e in r.events if isinstance(e, StepEvent)], r.summary) for r in done])
    return text, f"every method's answer ({len(done)})"
