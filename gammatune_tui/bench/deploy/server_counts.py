"""What a server's log says, in its own counts: the record every `--server-log` format is read into
(server_log.py reads vLLM's JSON and llama.cpp's line, server_prometheus.py vLLM's /metrics scrape)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...errors import GammatuneError


class ServerLogError(GammatuneError):
    """A --server-log file that cannot be read as either format: one line, exit 2."""


class NothingToGoOn(ValueError):
    """A well-formed log with no speculative step: no acceptance to predict from."""


@dataclass
class ServerLog:
    """What a server saw, in its own counts."""

    engine: str                  # "vLLM", "SGLang" or "llama.cpp"
    k: int                       # the server's window (vLLM's num_spec_tokens; llama.cpp: the longest run seen)
    steps: int                   # verification steps that drafted
    drafted: int
    accepted: int
    survival: list[float]        # P(accepted ≥ i + 1) per step, i < K (llama.cpp's "acc rate/pos"); vLLM's stops
                                 # at the longest run seen (past it every share is 0)
    requests: int = 1
    per_step: list[tuple[int, int]] | None = None   # (accepted, drafted) per step, with vLLM's `detailed`
    notes: list[str] | None = None   # what was inferred rather than read (printed under the verdict)

    @property
    def mean_acceptance_length(self) -> float:
        return 1 + self.accepted / self.steps if self.steps else math.nan

    @property
    def draft_acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else math.nan

    @property
    def mean_drafted(self) -> float:
        return self.drafted / self.steps if self.steps else 0.0


def count(value: Any, name: str) -> int:
    """A count a server wrote (a whole number ≥ 0), or ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a count, got {value!r}")
    return value


def add_histogram(total: list[int], h: list[int]) -> None:
    """Sum one request's dense histogram (H[n]: steps that accepted n drafts) into `total`, in place."""
    total += [0] * (len(h) - len(total))
    for j, c in enumerate(h):
        total[j] += c


def survival_of(hist: list[int], steps: int) -> list[float]:
    """P(accepted ≥ i + 1) per position, from a dense histogram, up to the longest run it holds."""
    longest = max((j for j, c in enumerate(hist) if c), default=0)
    return [sum(hist[i + 1:]) / steps for i in range(max(1, longest))]
