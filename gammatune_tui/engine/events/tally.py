"""The one tally of a session's steps: drafted, accepted, forward calls and times (docs/spec.md §5).

The decoder counts its summary with it, `session.stats.RunningStats` counts a
stream of events with it, and the benchmark's records and cells are tallies
too, so the acceptance rate, the per-position acceptance and the call counts
mean the same thing everywhere. Pure Python (no torch): the UI and the
simulator use it without loading a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import SessionSummary, StopReason


@dataclass(kw_only=True)
class SessionTally:
    """Totals over steps; `add_step` once per speculative step, `add` to sum tallies.

    Per-position acceptance (docs/spec.md §5): `pos_drafted[i]` counts the steps that
    drafted a token at position i, `pos_accepted[i]` those whose token i the
    target kept. `hist[d][a]` counts the steps that drafted d tokens and had a
    of them accepted: the acceptance histogram, by draft length, that the
    serving engines' metrics are read from (`speculative_decoding`).
    """

    steps: int = 0
    drafted: int = 0
    accepted: int = 0
    target_calls: int = 0
    draft_calls: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0
    pos_drafted: list[int] = field(default_factory=list)
    pos_accepted: list[int] = field(default_factory=list)
    hist: list[list[int]] = field(default_factory=list)

    def add_step(self, drafted: int, accepted: int, draft_calls: int, draft_s: float, verify_s: float) -> None:
        """One step: `drafted` tokens proposed, the first `accepted` of them kept, one verify pass."""
        self.steps += 1
        self.target_calls += 1
        self.draft_calls += draft_calls
        self.drafted += drafted
        self.accepted += accepted
        self.draft_s += draft_s
        self.verify_s += verify_s
        pos_d, pos_a = self.pos_drafted, self.pos_accepted
        if len(pos_d) < drafted:
            _grow(pos_d, pos_a, length=drafted)
        for i in range(accepted):
            pos_d[i] += 1
            pos_a[i] += 1
        for i in range(accepted, drafted):
            pos_d[i] += 1
        _count(self.hist, drafted, accepted)

    def add(self, other: "SessionTally") -> None:
        """Adds another tally's counts (e.g. every run of one benchmark cell)."""
        self.steps += other.steps
        self.target_calls += other.target_calls
        self.draft_calls += other.draft_calls
        self.drafted += other.drafted
        self.accepted += other.accepted
        self.draft_s += other.draft_s
        self.verify_s += other.verify_s
        _grow(self.pos_drafted, self.pos_accepted, length=len(other.pos_drafted))
        for i, (d, a) in enumerate(zip(other.pos_drafted, other.pos_accepted)):
            self.pos_drafted[i] += d
            self.pos_accepted[i] += a
        for d, row in enumerate(other.hist):
            for a, n in enumerate(row):
                _count(self.hist, d, a, n)

    @property
    def acceptance_rate(self) -> float:
        """α = accepted draft tokens / drafted tokens."""
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def per_position(self) -> list[float]:
        """P(token i accepted | token i drafted), for each position i."""
        return [a / d if d else 0.0 for a, d in zip(self.pos_accepted, self.pos_drafted)]

    def summary(self, generated: int, wall: float, stop_reason: StopReason, text: str, drafter: str = "") -> SessionSummary:
        """The session's summary event: `generated` tokens in `wall` seconds, drafted by `drafter`."""
        return SessionSummary(
            tokens=generated, steps=self.steps, acceptance_rate=self.acceptance_rate,
            tokens_per_step=(generated / self.steps) if self.steps else 0.0,
            tokens_per_s=(generated / wall) if wall > 0 else 0.0,
            stop_reason=stop_reason, drafted=self.drafted, accepted=self.accepted,
            target_calls=self.target_calls, draft_calls=self.draft_calls, wall_s=wall,
            draft_s=self.draft_s, verify_s=self.verify_s, per_position=self.per_position, text=text,
            drafter=drafter,
        )


def _count(hist: list[list[int]], drafted: int, accepted: int, n: int = 1) -> None:
    while len(hist) <= drafted:
        hist.append([0] * (len(hist) + 1))   # row d holds a = 0 … d
    hist[drafted][accepted] += n


def speculative_decoding(t: SessionTally, per_step: tuple[list[int], list[int]] | None = None) -> dict:
    """The tally in vLLM's per-request spec-decode terms (docs/deploy.md maps each to SGLang's and llama.cpp's).

    Steps that drafted nothing (a γ of 0, the budget's last token, prompt lookup with no match) are not
    speculative steps to vLLM: they are left out, as vLLM counts only drafts. `per_step` (accepted, drafted
    per step) adds vLLM's `detailed` arrays where a stream kept them.
    """
    steps = sum(sum(row) for row in t.hist[1:])
    k = len(t.hist) - 1 if steps else 0
    histogram = [sum(row[j] for row in t.hist[1:] if j < len(row)) for j in range(k + 1)]
    accepted_per_pos = list(t.pos_accepted[:k])
    # draft i accepted given drafts before it were and draft i was drafted: steps with a > i over steps with
    # a >= i and d > i (the conditional acceptance per position; gammatune's own, not a vLLM field)
    # (each row's counts summed from its end once, rather than the whole table once per position)
    reached = [0] * k
    for d, row in enumerate(t.hist):
        tail = 0
        for a in range(len(row) - 1, -1, -1):
            tail += row[a]
            if a < d and a < k:
                reached[a] += tail
    conditional = [accepted_per_pos[i] / reached[i] if reached[i] else 0.0 for i in range(k)]
    out = {
        "mean_acceptance_length": 1 + t.accepted / steps if steps else 1.0,
        "draft_acceptance_rate": t.accepted / t.drafted if t.drafted else 0.0,
        "acceptance_histogram": histogram,
        "acceptance_histogram_by_num_drafted": {str(d): row for d, row in enumerate(t.hist) if d and sum(row)},
        "num_spec_steps": steps,
        "num_accepted_draft_tokens": t.accepted,
        "num_draft_tokens": t.drafted,
        "num_spec_tokens": k,
        "num_accepted_tokens_per_pos": accepted_per_pos,
        "per_position_acceptance_rate": [a / steps for a in accepted_per_pos] if steps else [],
        "per_position_conditional_acceptance": conditional,
    }
    if per_step is not None:
        acc, dra = per_step
        keep = [i for i, d in enumerate(dra) if d]
        out["per_step_accepted"] = [acc[i] for i in keep]
        out["per_step_drafted"] = [dra[i] for i in keep]
    return out


def _grow(pos_drafted: list[int], pos_accepted: list[int], length: int) -> None:
    while len(pos_drafted) < length:
        pos_drafted.append(0)
        pos_accepted.append(0)


__all__ = ["SessionTally", "speculative_decoding"]
