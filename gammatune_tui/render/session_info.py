"""A recorded session's models, device, settings and versions as text: the replay header and the HTML export.

Only the parameters the session's method reads are listed (specdecode: none),
and the seed once.
"""

from __future__ import annotations

from rich.text import Text

from ..engine.events import SessionHeader
from ..engine.loading.load_stages import load_stages_text
from ..engine.common.names import is_self_draft
from ..engine.events.precision_text import model_note
from .safe_text import one_line
from .tables import shown_params


def settings_line(h: SessionHeader) -> str:
    """'gammatune+ γ0=4 eta=0.5 … · T=0.7 top-k=0 top-p=0.9 · seed=0 · max 256 tokens' (plain, one line)."""
    params = " ".join(f"{k}={v}" for k, v in shown_params(h.params, h.method))
    samp = h.sampling
    temp = samp.get("temperature", 0)
    sampling = "greedy" if temp == 0 else f"T={temp} top-k={samp.get('top_k', 0)} top-p={samp.get('top_p', 1.0)}"
    if samp.get("repetition_penalty", 1.0) != 1.0:
        sampling += f" repetition-penalty={samp['repetition_penalty']}"
    method = f"{h.method} γ0={h.gamma0}" + (f" {params}" if params else "")
    return one_line(f"{method} · {sampling} · seed={h.seed} · max {h.max_new_tokens} tokens")


def runner_note(h: SessionHeader) -> str:
    """' · static runner · loaded in 4.1 s: weights 1.4 · … s': how the session ran and where its load's
    time went (' (warm-up 0.8 s)' where no stages were recorded); empty where no runner was."""
    if not h.runner:
        return ""
    if h.load_s:
        return f" · {h.runner} runner · {load_stages_text(h.load_s)}"
    return f" · {h.runner} runner" + (f" (warm-up {h.warmup_s:.1f} s)" if h.warmup_s > 0 else "")


def _note(precision: str, nbytes: int, added: bool = False) -> str:
    note = model_note(precision, nbytes, added=added)
    return f" ({note})" if note else ""


def header_lines(h: SessionHeader, full: bool = True) -> Text:
    """Models, device, settings and versions of a session (all text escaped).

    `full=False` is the replay header on a narrow screen: the models, device
    and settings only (the load times and versions would take three of 24
    rows from the transcript; the palette's "Recording details" shows them).
    """
    t = Text()
    t.append("models ", style="dim")
    t.append(one_line(f"{h.target}{_note(h.target_precision, h.target_bytes)} ← "
                      f"{h.draft}{_note(h.draft_precision, h.draft_bytes, is_self_draft(h.draft))}"))
    if h.demo:
        t.append(" (demo pair)", style="dim")
    t.append("  device ", style="dim")
    t.append(one_line(f"{h.device}{'' if h.target_precision else ' ' + h.dtype}" + (runner_note(h) if full else (f" · {h.runner}" if h.runner else ""))))
    t.append("\nsettings ", style="dim")
    t.append(settings_line(h))
    if h.versions and full:
        t.append("\nversions ", style="dim")
        t.append(one_line(" ".join(f"{k} {v}" for k, v in h.versions.items())))
    return t


__all__ = ["header_lines", "runner_note", "settings_line"]
