"""Doctor's refusal of a draft source that has no draft model (prompt lookup, the n-gram pool, an MTP or
EAGLE-3 head): its simulation replays a draft model's teacher-forced trace, which such a source does not
have, so the row says where the source is measured instead (`compare --drafters`, live)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .examine import DoctorConfig, DraftReport, Progress


def source_without_model(path: str) -> str | None:
    """The draft source a `--draft` value names when it drafts without a draft model (prompt lookup, the
    n-gram pool, `mtp`, `eagle3:PATH`), else None."""
    from ...engine.common.names import BY_SOURCE, head_source

    head = head_source(path)
    if head is not None:
        return head[0]
    spec = BY_SOURCE.get(path.strip().lower())
    return spec.name if spec is not None and not spec.loads_draft else None


def refuse_source(report: DraftReport, name: str, cfg: DoctorConfig, progress: Progress) -> DraftReport:
    """A refused row, saying where such a source is measured: doctor's simulation replays a draft model's
    teacher-forced trace, which a head chained on its own output or a lookup does not have."""
    report.status = "refused"
    report.reason = (f"doctor simulates draft models and self-drafts from their traces, and {name} drafts without "
                     f"a draft model; race it live instead: gammatune compare --target {cfg.target} --drafters "
                     f"{report.path},self:int4")
    progress("refused", cfg.units())
    return report
