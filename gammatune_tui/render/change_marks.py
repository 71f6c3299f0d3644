"""Where new settings took effect in a session, in words: the transcript's marks and the HTML export's list.

A step whose event says `settings_changed` is the first one run with the
settings the user asked for (method, parameters or sampling). The chart
draws a vertical line there; the transcript (and so the F3 export, which is
the transcript) puts a mark such as ``⟦step 12: gammatune+ → specdecode⟧``
before that step's tokens, and the export lists every change of a session
under its statistics, so a page read later shows which text each method wrote.
"""

from __future__ import annotations

from typing import Sequence

from ..engine.events import StepEvent
from .safe_text import one_line
from .tables import shown_params


def _fmt(v: object) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def change_words(prev: StepEvent | None, ev: StepEvent) -> str:
    """What changed from `prev` (the step before, in the same session) to `ev`: 'gammatune+ → specdecode', 'eta 0.5 → 0.3'."""
    if prev is None:
        return f"→ {ev.method}"
    if prev.method != ev.method:
        return f"{prev.method} → {ev.method}"
    old = dict(shown_params(prev.params, prev.method))
    parts = [f"{k} {_fmt(old.get(k))} → {_fmt(v)}" for k, v in shown_params(ev.params, ev.method) if old.get(k) != v]
    return ", ".join(parts) or "new sampling settings"


def change_mark(prev: StepEvent | None, ev: StepEvent) -> str:
    """The transcript's mark before the first step run with new settings (steps counted from 1, as shown)."""
    return one_line(f"⟦step {ev.step + 1}: {change_words(prev, ev)}⟧")


def change_list(steps: Sequence[StepEvent]) -> list[str]:
    """Every change in one session's steps, in order: 'step 12: gammatune+ → specdecode'."""
    out = []
    for i, ev in enumerate(steps):
        if ev.settings_changed:
            out.append(one_line(f"step {ev.step + 1}: {change_words(steps[i - 1] if i else None, ev)}"))
    return out
