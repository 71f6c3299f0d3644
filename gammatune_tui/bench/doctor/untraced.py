"""Doctor's refusal of a draft source that has no draft model (prompt lookup, the n-gram pool, an MTP or
EAGLE-3 head): its simulation replays a draft model's teacher-forced trace, which such a source does not
have, so the row says where the source is measured instead (`compare --drafters`, live)."""

from __future__ import annotations

from ...engine.common.names import BY_SOURCE, head_source


def source_without_model(path: str) -> str | None:
    """The draft source a `--draft` value names when it drafts without a draft model (prompt lookup, the
    n-gram pool, `mtp`, `eagle3:PATH`), else None."""
    head = head_source(path)
    if head is not None:
        return head[0]
    spec = BY_SOURCE.get(path.strip().lower())
    return spec.name if spec is not None and not spec.loads_draft else None


def refusal(name: str, target: str, given: str) -> str:
    """The refused row's reason, saying where such a source is measured: doctor's simulation replays a draft
    model's teacher-forced trace, which a head chained on its own output or a lookup does not have."""
    return (f"doctor simulates draft models and self-drafts from their traces, and {name} drafts without a draft "
            f"model; race it live instead: gammatune compare --target {target} --drafters {given},self:int4")
