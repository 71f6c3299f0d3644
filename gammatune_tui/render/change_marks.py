"""Where new settings took effect in a session, in words: the transcript's marks, the export's list, the controls' note.

A step whose event says `settings_changed` is the first one run with the
settings the user asked for (method, parameters or sampling). The chart
draws a vertical line there; the transcript (and so the F3 export, which is
the transcript) puts a mark such as ``⟦step 12: gammatune+ → specdecode⟧``
or ``⟦step 7: γ0 4 → 6⟧`` before that step's tokens, the controls say
"applied at step 7: γ0 4 → 6", and the export lists every change of a
session under its statistics, so a page read later shows which text each
method wrote. Steps are counted from 1 everywhere a user reads them.

Parameters are named with the labels the controls show (η, not eta), read
from each parameter's one declaration (engine/policies/param_specs.py): the
mark must read like the field the user just edited. A sampling change
(temperature, top-k, top-p, seed) is named from the step's `sampling`,
which the decoder records on a step that changed settings, against the
sampling in force before (the header's, or the last change's).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..engine.events import SessionHeader, StepEvent
from ..engine.policies.param_specs import LABELS
from .safe_text import one_line
from .tables import shown_params

def _fmt(v: object) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _label(name: str) -> str:
    return LABELS.get(name, name)


def change_words(prev: StepEvent | None, ev: StepEvent, sampling_before: dict[str, Any] | None = None) -> str:
    """What changed from `prev` (the step before, in the same session) to `ev`: 'gammatune+ → specdecode',
    'γ0 4 → 6', 'η 0.5 → 0.3', 'T 0.7 → 0'. `sampling_before`: the sampling in force before `ev`."""
    parts: list[str] = []
    if prev is None:
        parts.append(f"→ {ev.method}")
    elif prev.method != ev.method:
        parts.append(f"{prev.method} → {ev.method}")
    else:
        old_g0, new_g0 = prev.params.get("gamma0"), ev.params.get("gamma0")
        if old_g0 is not None and new_g0 is not None and old_g0 != new_g0:
            parts.append(f"γ0 {_fmt(old_g0)} → {_fmt(new_g0)}")
        old = dict(shown_params(prev.params, prev.method))
        parts += [f"{_label(k)} {_fmt(old.get(k))} → {_fmt(v)}"
                  for k, v in shown_params(ev.params, ev.method) if old.get(k) != v]
    if ev.sampling and sampling_before is not None:
        parts += [f"{_label(k)} {_fmt(sampling_before.get(k))} → {_fmt(v)}"
                  for k, v in ev.sampling.items() if sampling_before.get(k) != v]
    elif ev.sampling and sampling_before is None:
        parts.append("new sampling settings")
    return ", ".join(parts) or "new sampling settings"   # a step that did not record its sampling (schema 1)


def change_mark(prev: StepEvent | None, ev: StepEvent, sampling_before: dict[str, Any] | None = None) -> str:
    """The transcript's mark before the first step run with new settings (steps counted from 1, as shown)."""
    return one_line(f"⟦step {ev.step + 1}: {change_words(prev, ev, sampling_before)}⟧")


def sampling_in_force(header: SessionHeader | None, steps: Sequence[StepEvent]) -> dict[str, Any] | None:
    """The sampling the last of `steps` ran with: the last change's, else the header's (None: not known)."""
    for ev in reversed(steps):
        if ev.sampling:
            return ev.sampling
    return dict(header.sampling) if header is not None else None


def change_list(steps: Sequence[StepEvent], header: SessionHeader | None = None) -> list[str]:
    """Every change in one session's steps, in order: 'step 12: gammatune+ → specdecode'."""
    out = []
    sampling = dict(header.sampling) if header is not None else None
    for i, ev in enumerate(steps):
        if ev.settings_changed:
            out.append(one_line(f"step {ev.step + 1}: {change_words(steps[i - 1] if i else None, ev, sampling)}"))
        if ev.sampling:
            sampling = ev.sampling
    return out
