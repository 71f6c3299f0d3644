"""`doctor --server-log FILE`: a server's own acceptance read back, and what each shorter window would have given.

Two formats, as their sources write them (docs/deploy.md cites both):

* vLLM's per-request acceptance metrics (`--per-request-spec-decode-metrics
  summary|detailed`): a response's `metrics.speculative_decoding` object
  (dense `acceptance_histogram`), or the older `--per-request-spec-decode-stats`
  form, `choices[i].speculative_decoding_stats` (sparse histogram). A file may
  hold one response, a JSON list of them, or one per line; `detailed` adds
  `per_step_accepted` / `per_step_drafted`.
* llama.cpp's statistics line (`common_speculative_print_stats`):
  `statistics draft-simple: #calls(b,g,a) = … #gen tokens = … #acc tokens = …,
  #mean acc len = …, #acc rate/pos = (…)`; the last such line counts.

Every step's accepted count a at the server's window K says how many a
window of K′ ≤ K would have accepted at that step: min(a, K′), since
acceptance is a prefix. Each K′ is priced per step (K′ drafted tokens, one
verify pass of K′ + 1) with the given costs. The steps a shorter window
would take are not the server's (a full window ends a step sooner), so the
prediction treats each server step as one step at K′: an estimate, said so.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ...errors import GammatuneError
from ..sim.cost_model import CostModel


class ServerLogError(GammatuneError):
    """A --server-log file that cannot be read as either format: one line, exit 2."""


@dataclass
class ServerLog:
    """What a server saw, in its own counts."""

    engine: str                  # "vLLM" or "llama.cpp"
    k: int                       # the server's window (vLLM's num_spec_tokens; llama.cpp: the longest run seen)
    steps: int                   # verification steps that drafted
    drafted: int
    accepted: int
    survival: list[float]        # P(accepted ≥ i + 1) per step, i < K (llama.cpp's "acc rate/pos")
    requests: int = 1
    per_step: list[tuple[int, int]] | None = None   # (accepted, drafted) per step, with vLLM's `detailed`

    @property
    def mean_acceptance_length(self) -> float:
        return 1 + self.accepted / self.steps if self.steps else math.nan

    @property
    def draft_acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else math.nan

    @property
    def mean_drafted(self) -> float:
        return self.drafted / self.steps if self.steps else 0.0


# --- reading -------------------------------------------------------------------------------------------------
LLAMA_LINE = re.compile(
    r"statistics\s+(?P<impl>\S+):\s*#calls\(b,g,a\)\s*=\s*(?P<b>\d+)\s+(?P<g>\d+)\s+(?P<a>\d+),\s*"
    r"#gen drafts\s*=\s*(?P<gd>\d+),\s*#acc drafts\s*=\s*(?P<ad>\d+),\s*#gen tokens\s*=\s*(?P<gt>\d+),\s*"
    r"#acc tokens\s*=\s*(?P<at>\d+)(?:,\s*#mean acc len\s*=\s*[\d.]+,\s*#acc rate/pos\s*=\s*\((?P<pos>[^)]*)\))?")


def read(path: Path) -> ServerLog:
    """The file as a vLLM metrics JSON or llama.cpp statistics lines; anything else is a ServerLogError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ServerLogError(f"--server-log {path}: no such file") from None
    except IsADirectoryError:
        raise ServerLogError(f"--server-log {path} is a directory; give the log file") from None
    except UnicodeDecodeError:
        raise ServerLogError(f"--server-log {path}: not a text file (neither vLLM metrics JSON nor a "
                             "llama.cpp log)") from None
    except OSError as exc:
        raise ServerLogError(f"--server-log {path}: cannot read ({exc.strerror or exc})") from None
    lines = [m for m in (LLAMA_LINE.search(line) for line in text.splitlines()) if m]
    if lines:
        return _llama(lines[-1], path)
    stats = [s for s in (_vllm_stats(obj) for obj in _json_objects(text)) if s is not None]
    if not stats:
        raise ServerLogError(f"--server-log {path}: neither vLLM per-request spec-decode metrics (JSON with "
                             "metrics.speculative_decoding) nor llama.cpp speculative statistics lines")
    try:
        return _vllm(stats)
    except (KeyError, TypeError, ValueError) as exc:
        raise ServerLogError(f"--server-log {path}: vLLM spec-decode metrics with a bad field ({exc})") from None


def _json_objects(text: str) -> list[Any]:
    try:
        whole = json.loads(text)
        return whole if isinstance(whole, list) else [whole]
    except ValueError:
        pass
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _vllm_stats(obj: Any) -> dict | None:
    """The spec-decode block of one response (either form), or the block itself; None when there is none."""
    if not isinstance(obj, dict):
        return None
    if "num_spec_steps" in obj and "num_accepted_draft_tokens" in obj:
        return obj
    metrics = obj.get("metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get("speculative_decoding"), dict):
        return metrics["speculative_decoding"]
    for choice in obj.get("choices") or []:
        if isinstance(choice, dict) and isinstance(choice.get("speculative_decoding_stats"), dict):
            return choice["speculative_decoding_stats"]
    return None


def _histogram(h: Any, k: int) -> list[int]:
    """vLLM's dense list, or the older sparse {"j": count} map, as a dense list of length k + 1."""
    if isinstance(h, dict):
        out = [0] * (k + 1)
        for j, n in h.items():
            out[int(j)] += int(n)
        return out
    dense = [int(n) for n in h]
    return dense + [0] * (k + 1 - len(dense))


def _count(d: dict, name: str) -> int:
    v = d[name]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{name} must be a count, got {v!r}")
    return v


def _vllm(stats: Sequence[dict]) -> ServerLog:
    k = max(_count(s, "num_spec_tokens") for s in stats)
    if k < 1:
        raise ValueError("num_spec_tokens must be at least 1")
    hist = [0] * (k + 1)
    steps = drafted = accepted = 0
    per_step: list[tuple[int, int]] | None = []
    for s in stats:
        for j, n in enumerate(_histogram(s.get("acceptance_histogram", []), k)):
            hist[j] += n
        steps += _count(s, "num_spec_steps")
        drafted += _count(s, "num_draft_tokens")
        accepted += _count(s, "num_accepted_draft_tokens")
        acc, dra = s.get("per_step_accepted"), s.get("per_step_drafted")
        if per_step is not None and isinstance(acc, list) and isinstance(dra, list) and len(acc) == len(dra):
            per_step += [(int(a), int(d)) for a, d in zip(acc, dra)]
        else:
            per_step = None
    if sum(hist) and sum(hist) != steps:
        raise ValueError(f"the histogram counts {sum(hist)} steps, num_spec_steps says {steps}")
    if not sum(hist) and per_step:
        for a, _ in per_step:
            hist[min(a, k)] += 1
    total = sum(hist)
    survival = [sum(hist[i + 1:]) / total if total else 0.0 for i in range(k)]
    return ServerLog("vLLM", k, steps, drafted, accepted, survival, len(stats), per_step or None)


def _llama(m: re.Match, path: Path) -> ServerLog:
    steps = int(m["a"])
    rates = [float(x) for x in m["pos"].split(",") if x.strip()] if m["pos"] else []
    if not rates:
        raise ServerLogError(f"--server-log {path}: the llama.cpp statistics line has no '#acc rate/pos' "
                             "(no draft was accepted yet)")
    return ServerLog("llama.cpp", len(rates), steps, int(m["gt"]), int(m["at"]), rates)


# --- what each K′ ≤ K would give ----------------------------------------------------------------------------
@dataclass(frozen=True)
class WindowPrediction:
    k: int
    tokens_per_step: float       # mean accepted + 1
    speedup: float               # over the target alone, under the costs


def predictions(log: ServerLog, cost: CostModel) -> list[WindowPrediction]:
    """Every K′ ≤ K: a step accepts min(a, K′) (exact per step), drafts min(d, K′), verifies that plus one."""
    plain = cost.verify(1)   # the target alone: one forward per token
    out = []
    for kk in range(1, log.k + 1):
        if log.per_step:
            acc = sum(min(a, kk) for a, _ in log.per_step) / len(log.per_step)
            step_s = sum(min(d, kk) * cost.draft_token_s + cost.verify(min(d, kk) + 1)
                         for _, d in log.per_step) / len(log.per_step)
        else:
            acc = sum(log.survival[:kk])
            d = min(log.mean_drafted, kk) if log.mean_drafted else kk
            step_s = d * cost.draft_token_s + cost.verify(max(1, round(d)) + 1)
        out.append(WindowPrediction(kk, acc + 1, (acc + 1) * plain / step_s if step_s > 0 else math.nan))
    return out


__all__ = ["LLAMA_LINE", "ServerLog", "ServerLogError", "WindowPrediction", "predictions", "read"]
