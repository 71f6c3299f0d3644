"""Each model's precision and size in words, the one way every screen and table says them (no torch).

"Each model at its own precision": a float32 target may draft with a 4-bit
copy of itself, a bf16 draft folder or an int8 one, so `cpu float32` no
longer says what ran. The header records each model's precision and weight
bytes (a self-draft's: what it adds to the target's); these helpers turn
them into `float32, 538 MB` and `int4 g32, +84 MB` for the run header, the
replay header, the chat subtitle, `models`, compare's and doctor's tables.
"""

from __future__ import annotations

from ..common.names import is_self_draft


def human_bytes(n: int) -> str:
    """`538 MB`, `84 MB`, `1.2 GB`, `3.4 kB`: a weight size at a glance."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            v = n / size
            return f"{v:.1f} {unit}" if v < 10 else f"{v:.0f} {unit}"
    return f"{n} B"


def model_note(precision: str, nbytes: int = 0, *, added: bool = False) -> str:
    """`float32, 538 MB`; `int4 g32, +84 MB` for a draft that shares the rest with its target; '' when unknown."""
    if not precision:
        return ""
    if nbytes <= 0:
        return precision
    return f"{precision}, {'+' if added else ''}{human_bytes(nbytes)}"


def header_models(h: object) -> str:
    """'target X (float32, 538 MB) · draft self:int4 (int4 g32, +84 MB)' from a SessionHeader (older ones: the names)."""
    t = model_note(getattr(h, "target_precision", ""), getattr(h, "target_bytes", 0))
    draft = str(getattr(h, "draft", ""))
    d = model_note(getattr(h, "draft_precision", ""), getattr(h, "draft_bytes", 0), added=is_self_draft(draft))
    target = str(getattr(h, "target", ""))
    return f"target {target}{f' ({t})' if t else ''} · draft {draft}{f' ({d})' if d else ''}"


__all__ = ["human_bytes", "model_note", "header_models"]
