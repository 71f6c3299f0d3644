"""Which CUDA graphs a runner captures, decided before the user waits: a pure function of the session's bounds.

A graph is one (window, span) pair: `window` tokens fed at once (the q of a
forward), attending over the first `span` key positions of the buffers. Spans
are length buckets of `BUCKET` tokens up to the buffers' capacity, so a step
reads only the filled prefix rounded up to the next bucket instead of the
whole buffer.

The windows a session can use follow from the policy's bound γ_max: the
target verifies [the last accepted token, up to γ drafts] — 1 … γ_max + 1
tokens; the draft model is fed 1 token per drafted token, or 2 after a fully
accepted window (the last draft and the target's bonus). Windows longer than
`MAX_Q` (rare: a γ_max above 63) run uncaptured.

Capture happens only in warm-up and at a session's start (in chat: between
turns), never mid-answer; a window the plan did not foresee (the user raised
γ_max during an answer) runs uncaptured for that answer and is captured at the
next start (graphs.py).
"""

from __future__ import annotations

from dataclasses import dataclass

BUCKET = 256  # span granularity: a step attends over the filled length rounded up to this
MAX_Q = 64  # windows up to this many tokens get a graph; longer ones run uncaptured
DRAFT_WINDOWS = (1, 2)


def span_for(end: int, capacity: int) -> int:
    """The bucket a step ending at `end` tokens attends over (never past the capacity)."""
    return min(capacity, max(BUCKET, -(-int(end) // BUCKET) * BUCKET))


def spans_upto(capacity: int) -> tuple[int, ...]:
    """Every span a buffer of `capacity` tokens can be attended over."""
    return tuple(sorted({span_for(e, capacity) for e in range(BUCKET, capacity + BUCKET, BUCKET)}))


def windows_for(role: str, gamma_max: int) -> tuple[int, ...]:
    """The window lengths a `role` ("target" or "draft") runner sees under a policy bounded by `gamma_max`."""
    if role == "draft":
        return DRAFT_WINDOWS
    if role != "target":
        raise ValueError(f"unknown runner role {role!r}")
    return tuple(range(1, max(1, int(gamma_max)) + 2))


@dataclass(frozen=True)
class CapturePlan:
    windows: tuple[int, ...]  # captured window lengths (≤ MAX_Q)
    spans: tuple[int, ...]  # captured spans (length buckets ≤ capacity)
    uncaptured: tuple[int, ...]  # planned windows longer than MAX_Q: they run the uncaptured step

    def graphs(self) -> list[tuple[int, int]]:
        return [(q, s) for s in self.spans for q in self.windows]


def plan_captures(role: str, gamma_max: int, capacity: int, extra_windows: tuple[int, ...] = ()) -> CapturePlan:
    """Every (window, span) a session of this role, bound and capacity can step through.

    `extra_windows` are windows seen uncaptured in an earlier answer (γ_max raised mid-answer).
    """
    wanted = sorted(set(windows_for(role, gamma_max)) | set(extra_windows))
    return CapturePlan(windows=tuple(q for q in wanted if q <= MAX_Q), spans=spans_upto(capacity),
                       uncaptured=tuple(q for q in wanted if q > MAX_Q))


__all__ = ["BUCKET", "MAX_Q", "DRAFT_WINDOWS", "CapturePlan", "plan_captures", "span_for", "spans_upto",
           "windows_for"]
