"""`compare --json FILE`: every contestant's settings, speed-up with its spread, and acceptance in vLLM's terms.

Kept apart from compare.py (which parses flags and runs the job) because it
is a plain function of what the job measured: the ranked summary and each
contestant's median run. The acceptance object is the tally of the median
run's stream in vLLM's per-request spec-decode names (docs/deploy.md), the
same one `run --json` and bench's JSON carry. The speed-up's spread pairs
each run with the target-only run of its own round (compare interleaves
them), so a busy spell that slows both sides of one round moves the ratio
less than either side.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:   # what the race measured (the session's types; loaded with the job)
    from ..session.compare import CompareSummary, MethodRun, SummaryRow
    from ..session.compare_job import CompareJob
    from ..session.lossless import Lossless


def _num(v: object) -> object:
    return v if not isinstance(v, float) or math.isfinite(v) else None


def _round_ratios(speeds: Sequence[float], plain: Sequence[float]) -> list[float]:
    """Each run's tokens/s over the target-only run of its round (rounds in order); none when they do not pair."""
    if not plain or len(speeds) != len(plain):
        return []
    return [s / p for s, p in zip(speeds, plain) if p > 0]


def contestant_json(run: MethodRun, row: SummaryRow, plain: Sequence[float]) -> dict[str, Any]:
    """One contestant: its settings, speed (median, slowest, fastest run), speed-up over target-only, acceptance."""
    h = run.header
    ratios = _round_ratios(run.speeds, plain)
    return {
        "label": row.label, "rank": row.rank,
        "settings": {"method": h.method, "gamma0": h.gamma0, "params": h.params, "drafter": h.drafter,
                     "drafter_params": h.drafter_params} if h is not None else {"method": row.method},
        "tokens": row.tokens, "stop_reason": row.stop_reason,
        "tokens_per_s": {"median": row.tokens_per_s, "low": row.low, "high": row.high, "runs": list(run.speeds)},
        "speedup_over_target_only": None if row.over_plain is None else {
            "median": row.over_plain, "low": min(ratios) if ratios else None, "high": max(ratios) if ratios else None,
            "per_round": ratios},
        "speedup_over_specdecode": _num(row.speedup),
        "speculative_decoding": run.stats.speculative_decoding,
    }


def lossless_json(v: Lossless) -> dict[str, Any]:
    """The greedy check; a difference carries where, at which precision, and whether a near-tie explains it."""
    out: dict[str, Any] = {"checked": v.checked, "identical": v.identical, "message": v.message}
    if v.checked and not v.identical:
        out.update(position=v.position, method=v.method, dtype=v.dtype, near_tie=v.near_tie, fault=v.fault,
                   top_two_gap=v.gap, rounding=v.tolerance)
    return out


def compare_json(job: CompareJob, summary: CompareSummary) -> dict[str, Any]:
    """The whole race: the prompt and settings shared by all, each contestant, and target-only when it ran."""
    plain = list(job.reference.speeds) if job.reference is not None else []
    rows = {r.label: r for r in summary.rows}
    ref = next((r for r in summary.rows if r.reference), None)
    return {
        "prompt": job.prompt, "max_new_tokens": job.max_new_tokens, "sampling": job.sampling.to_json(),
        "repeats": job.repeats, "runs": summary.runs, "ranked": summary.ranked, "models": summary.models,
        "lossless": lossless_json(summary.lossless),
        "contestants": [contestant_json(run, rows[run.label], plain) for run in job.runs if run.label in rows],
        "target_only": None if ref is None else {
            "tokens": ref.tokens, "stop_reason": ref.stop_reason,
            "tokens_per_s": {"median": ref.tokens_per_s, "low": ref.low, "high": ref.high, "runs": plain}},
    }


def write_compare_json(path: Path, job: CompareJob, summary: CompareSummary) -> None:
    Path(path).write_text(json.dumps(compare_json(job, summary), indent=1, allow_nan=False, default=_num) + "\n",
                          encoding="utf-8")


__all__ = ["compare_json", "contestant_json", "write_compare_json"]
