"""What a server's log says, in its own counts: the record every `--server-log` format is read into
(server_log.py reads vLLM's JSON and llama.cpp's line, server_prometheus.py vLLM's /metrics scrape,
server_sglang_info.py SGLang's /server_info, which holds only a mean).

Per-request formats also keep each request apart (`Request`): the data pitfalls
(bench/doctor/pitfalls_data.py) look for runs of zero acceptance inside one
request and for acceptance falling with the prompt's length, which the sums hide."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...errors import GammatuneError


class ServerLogError(GammatuneError):
    """A --server-log file that cannot be read as either format: one line, exit 2."""


class NothingToGoOn(ValueError):
    """A well-formed log with no speculative step: no acceptance to predict from."""


@dataclass(frozen=True)
class Request:
    """One request's own counts, where the format keeps requests apart (per-request JSON)."""

    steps: int
    drafted: int
    accepted: int
    prompt_tokens: int | None = None                 # the response's usage.prompt_tokens (SGLang: meta_info's)
    per_step: list[tuple[int, int]] | None = None    # (accepted, drafted) per step, with vLLM's `detailed`


@dataclass
class ServerLog:
    """What a server saw, in its own counts."""

    engine: str                  # "vLLM", "SGLang", "TensorRT-LLM", "llama.cpp" (or an AIPerf record)
    k: int                       # the server's window (vLLM's num_spec_tokens; llama.cpp: the longest run seen)
    steps: int                   # verification steps that drafted
    drafted: int
    accepted: int
    survival: list[float]        # P(accepted ≥ i + 1) per step, i < K (llama.cpp's "acc rate/pos"); vLLM's stops
                                 # at the longest run seen (past it every share is 0)
    requests: int = 1
    per_step: list[tuple[int, int]] | None = None   # (accepted, drafted) per step, with vLLM's `detailed`
    notes: list[str] | None = None   # what was inferred rather than read (printed under the verdict)
    per_request: list[Request] | None = None   # each request apart, where the format keeps them apart
    # (mean accepted drafts per step, drafts per step) when that is all the log holds (SGLang's /server_info):
    # then steps, drafted and accepted are 0 (not reported) and survival is [] (unknown)
    mean_only: tuple[float, float] | None = None

    @property
    def mean_acceptance_length(self) -> float:
        if self.mean_only is not None:
            return 1 + self.mean_only[0]
        return 1 + self.accepted / self.steps if self.steps else math.nan

    @property
    def draft_acceptance_rate(self) -> float:
        if self.mean_only is not None:
            return self.mean_only[0] / self.mean_only[1] if self.mean_only[1] else math.nan
        return self.accepted / self.drafted if self.drafted else math.nan

    @property
    def mean_drafted(self) -> float:
        if self.mean_only is not None:
            return self.mean_only[1]
        return self.drafted / self.steps if self.steps else 0.0


def count(value: Any, name: str) -> int:
    """A count a server wrote (a whole number ≥ 0), or ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a count, got {value!r}")
    return value


def prompt_tokens(obj: Any) -> int | None:
    """An OpenAI-style response's prompt length (`usage.prompt_tokens`), None when it carries none; ValueError when
    it is there but not a count."""
    usage = obj.get("usage") if isinstance(obj, dict) else None
    value = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return None if value is None else count(value, "usage.prompt_tokens")


def add_histogram(total: list[int], h: list[int]) -> None:
    """Sum one request's dense histogram (H[n]: steps that accepted n drafts) into `total`, in place."""
    total += [0] * (len(h) - len(total))
    for j, c in enumerate(h):
        total[j] += c


def survival_of(hist: list[int], steps: int) -> list[float]:
    """P(accepted ≥ i + 1) per position, from a dense histogram, up to the longest run it holds."""
    longest = max((j for j, c in enumerate(hist) if c), default=0)
    return [sum(hist[i + 1:]) / steps for i in range(max(1, longest))]
