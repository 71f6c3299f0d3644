"""`doctor --server-log FILE`: a server's own acceptance read back, and what each shorter window would have given.

The formats, as their sources write them (docs/deploy.md cites them; vLLM's Prometheus `/metrics`
scrape is read by server_prometheus.py, SGLang's per-request `meta_info` by server_sglang.py):

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
from typing import Any, Callable, Sequence

from ..sim.cost_model import CostModel
from .server_counts import NothingToGoOn, Request, ServerLog, ServerLogError, prompt_tokens
from .server_prometheus import is_scrape, read_scrape
from .server_sglang import read_sglang, sglang_meta
from .server_sglang_info import read_server_info, server_info
from .server_trtllm import read_trtllm, trtllm_block


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
    if is_scrape(text):
        try:
            return read_scrape(text)
        except NothingToGoOn as exc:
            raise ServerLogError(f"--server-log {path}: {exc}") from None
        except ValueError as exc:
            raise ServerLogError(f"--server-log {path}: vLLM Prometheus scrape: {exc}") from None
    objects = _json_objects(text)
    stats = [(o, s) for o, s in ((o, _vllm_stats(o)) for o in objects) if s is not None]
    metas = [m for m in (sglang_meta(obj) for obj in objects) if m is not None]
    trt = [(o, b) for o, b in ((o, trtllm_block(o)) for o in objects) if b is not None]
    infos = [i for i in (server_info(obj) for obj in objects) if i is not None]
    readers: tuple[tuple[Callable[[], ServerLog], bool, str], ...] = (
        (lambda: read_sglang(metas), bool(metas), "SGLang spec-decode meta_info"),
        (lambda: read_trtllm(trt), bool(trt), "TensorRT-LLM speculative_decoding"),
        (lambda: read_server_info(infos), bool(infos), "SGLang /server_info"))
    for reader, found, what in readers:
        if not stats and found:
            try:
                return reader()
            except NothingToGoOn as exc:
                raise ServerLogError(f"--server-log {path}: {exc}") from None
            except (KeyError, TypeError, ValueError) as exc:
                raise ServerLogError(f"--server-log {path}: {what} with a bad field ({exc})") from None
    if not stats:
        raise ServerLogError(f"--server-log {path}: none of the formats read (vLLM per-request spec-decode "
                             "metrics, JSON with metrics.speculative_decoding; vLLM's Prometheus /metrics with "
                             "vllm:spec_decode_* counters; SGLang responses with meta_info.spec_verify_ct; "
                             "TensorRT-LLM responses with choices[].speculative_decoding; SGLang's /server_info with "
                             "internal_states; AIPerf's SpecDecodeAcceptanceRecord; llama.cpp speculative statistics "
                             "lines)")
    try:
        return _vllm(stats)
    except NothingToGoOn as exc:
        raise ServerLogError(f"--server-log {path}: {exc}") from None
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
    choices = obj.get("choices")
    for choice in choices if isinstance(choices, list) else []:
        if isinstance(choice, dict) and isinstance(choice.get("speculative_decoding_stats"), dict):
            return choice["speculative_decoding_stats"]
    return None


def _histogram(h: Any, k: int) -> dict[int, int]:
    """vLLM's dense list, or the older sparse {"j": count} map, as {accepted: steps}; a slot past K is refused."""
    if isinstance(h, dict):
        items = list(h.items())
    elif isinstance(h, list):
        if len(h) > k + 1:
            raise ValueError(f"acceptance_histogram has {len(h)} entries; num_spec_tokens {k} allows {k + 1} "
                             f"(0..{k} accepted)")
        items = list(enumerate(h))
    else:
        raise ValueError(f"acceptance_histogram must be a list or a map, got {type(h).__name__}")
    out: dict[int, int] = {}
    for j, n in items:
        try:
            jj = int(j)
        except (TypeError, ValueError):
            raise ValueError(f"acceptance_histogram key {j!r} is not a number of accepted tokens") from None
        if not 0 <= jj <= k:
            raise ValueError(f"acceptance_histogram key {jj} is outside 0..{k} (num_spec_tokens {k})")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"acceptance_histogram[{jj}] must be a count, got {n!r}")
        if n:
            out[jj] = out.get(jj, 0) + n
    return out


def _count(d: dict, name: str) -> int:
    if name not in d:
        raise ValueError(f"{name} is missing")
    v = d[name]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{name} must be a count, got {v!r}")
    return v


def _per_step(s: dict, k: int) -> list[tuple[int, int]] | None:
    """`detailed`'s per-step arrays as (accepted, drafted) pairs, each in range; None when the response lacks them."""
    acc, dra = s.get("per_step_accepted"), s.get("per_step_drafted")
    if not (isinstance(acc, list) and isinstance(dra, list)):
        return None
    if len(acc) != len(dra):
        raise ValueError(f"per_step_accepted has {len(acc)} steps, per_step_drafted {len(dra)}")
    out = []
    for i, (a, d) in enumerate(zip(acc, dra)):
        for name, v in (("per_step_accepted", a), ("per_step_drafted", d)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}[{i}] must be a count, got {v!r}")
        if a > d or d > k:
            raise ValueError(f"step {i} accepted {a} of {d} drafted at num_spec_tokens {k}")
        out.append((a, d))
    return out


def _window(s: dict) -> tuple[int, bool]:
    """num_spec_tokens, or (when a response lacks it) the dense histogram's length less one; True when inferred."""
    if "num_spec_tokens" in s or not isinstance(s.get("acceptance_histogram"), list):
        if "num_spec_tokens" not in s:
            raise ValueError("num_spec_tokens is missing (and no dense acceptance_histogram to take K from)")
        return _count(s, "num_spec_tokens"), False
    return len(s["acceptance_histogram"]) - 1, True


def _vllm(pairs: Sequence[tuple[Any, dict]]) -> ServerLog:
    """The responses (each with its spec-decode block) summed, each request also kept apart with its prompt length."""
    stats = [s for _, s in pairs]
    windows = [_window(s) for s in stats]
    k = max(kk for kk, _ in windows)
    notes = [f"num_spec_tokens is absent: K = {k} is taken from acceptance_histogram's length ({k + 1} entries)"] \
        if any(inferred for _, inferred in windows) else None
    if k < 1:
        raise ValueError("num_spec_tokens must be at least 1")
    hist: dict[int, int] = {}
    steps = drafted = accepted = 0
    per_step: list[tuple[int, int]] | None = []
    requests = []
    for obj, s in pairs:
        for j, n in _histogram(s.get("acceptance_histogram", []), k).items():
            hist[j] = hist.get(j, 0) + n
        mine = _per_step(s, k)
        request = Request(_count(s, "num_spec_steps"), _count(s, "num_draft_tokens"),
                          _count(s, "num_accepted_draft_tokens"), prompt_tokens(obj), mine)
        steps, drafted, accepted = steps + request.steps, drafted + request.drafted, accepted + request.accepted
        requests.append(request)
        per_step = per_step + mine if per_step is not None and mine is not None else None
    if accepted > drafted:
        raise ValueError(f"num_accepted_draft_tokens {accepted} is more than num_draft_tokens {drafted}")
    if drafted > steps * k:
        raise ValueError(f"num_draft_tokens {drafted} is more than num_spec_steps {steps} × num_spec_tokens {k}")
    if sum(hist.values()) and sum(hist.values()) != steps:
        raise ValueError(f"the histogram counts {sum(hist.values())} steps, num_spec_steps says {steps}")
    if hist and sum(j * n for j, n in hist.items()) != accepted:
        raise ValueError(f"the histogram accepts {sum(j * n for j, n in hist.items())} tokens, "
                         f"num_accepted_draft_tokens says {accepted}")
    if not hist and per_step:
        for a, _ in per_step:
            hist[a] = hist.get(a, 0) + 1
    if steps == 0:
        raise NothingToGoOn("num_spec_steps is 0: no speculative step, nothing to go on")
    if not hist:
        raise ValueError("acceptance_histogram (or detailed per_step_accepted) is missing: the per-position "
                         "acceptance cannot be known")
    total = sum(hist.values())
    longest = max(max(hist), max((d for _, d in per_step), default=0) if per_step else 0, 1)
    run = min(k, longest)   # positions past the longest run seen are all 0: not listed, the table stays short
    survival = [sum(n for j, n in hist.items() if j > i) / total for i in range(run)]
    # AIPerf's SpecDecodeAcceptanceRecord uses vLLM's names, and says which server it came from
    servers = sorted({str(s["engine"]) for s in stats if isinstance(s.get("engine"), str)})
    engine = f"AIPerf record ({', '.join(servers)})" if servers else "vLLM"
    return ServerLog(engine, k, steps, drafted, accepted, survival, len(stats), per_step or None, notes, requests)


def _llama(m: re.Match, path: Path) -> ServerLog:
    steps, drafted, accepted = int(m["a"]), int(m["gt"]), int(m["at"])
    where = f"--server-log {path}: the llama.cpp statistics line"
    if steps == 0 or drafted == 0:
        raise ServerLogError(f"{where} counts no speculative step (#calls a = {steps}, #gen tokens = {drafted}): "
                             "nothing to go on")
    if accepted > drafted:
        raise ServerLogError(f"{where} accepts more tokens ({accepted}) than it drafted ({drafted})")
    if not m["pos"] or not m["pos"].strip():
        raise ServerLogError(f"{where} has no '#acc rate/pos' (no draft was accepted yet)")
    try:
        rates = [float(x) for x in m["pos"].split(",") if x.strip()]   # a trailing comma is the format's
    except ValueError:
        raise ServerLogError(f"{where}: '#acc rate/pos = ({m['pos'].strip()})' is not a list of numbers") from None
    bad = [r for r in rates if not (math.isfinite(r) and 0 <= r <= 1)]
    if bad:
        raise ServerLogError(f"{where}: '#acc rate/pos' has {bad[0]}, outside 0..1 (a rate)")
    return ServerLog("llama.cpp", len(rates), steps, drafted, accepted, rates)


# --- what each K′ ≤ K would give ----------------------------------------------------------------------------
@dataclass(frozen=True)
class WindowPrediction:
    k: int
    tokens_per_step: float       # mean accepted + 1 (with only a mean: the least it can be)
    speedup: float               # over the target alone, under the costs (with only a mean: the least)
    high: tuple[float, float] | None = None   # with only a mean (SGLang /server_info): the most each can be


SCREEN = 16   # K′ = 1..16 each; past that, every doubling up to the longest run seen (the table stays a screen)


def windows(log: ServerLog) -> list[int]:
    """The K′ worth pricing: each up to 16, then doublings, up to the longest run seen, then the server's K.

    Past the longest run seen a window accepts no more and drafts no less, so a larger K′ cannot do better
    than that run; the server's own K is kept as the last row to compare with."""
    run = len(log.survival) or log.k   # a mean alone (no shares): every window up to K
    ks = list(range(1, min(run, SCREEN) + 1))
    while ks[-1] * 2 < run:
        ks.append(ks[-1] * 2)
    ks += [kk for kk in (run, log.k) if kk > ks[-1]]
    return ks


def predictions(log: ServerLog, cost: CostModel) -> list[WindowPrediction]:
    """Each K′ of `windows`: a step accepts min(a, K′) (exact per step), drafts min(d, K′), verifies that + 1."""
    plain = cost.verify(1)   # the target alone: one forward per token
    out = []
    for kk in windows(log):
        if log.mean_only is not None:
            out.append(_from_mean(log, kk, cost, plain))
            continue
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


def _from_mean(log: ServerLog, kk: int, cost: CostModel, plain: float) -> WindowPrediction:
    """K′ from a mean alone: a prefix's shares fall with the position, so the first K′ of K positions hold at least
    K′/K of the mean accepted, and at most min(K′, the mean); at K′ = K the mean itself."""
    assert log.mean_only is not None
    mean, per_step = log.mean_only
    d = min(per_step, kk)
    step_s = d * cost.draft_token_s + cost.verify(max(1, round(d)) + 1)
    low, high = (mean * kk / log.k, min(kk, mean)) if kk < log.k else (mean, mean)

    def speed(acc: float) -> float:
        return (acc + 1) * plain / step_s if step_s > 0 else math.nan

    return WindowPrediction(kk, low + 1, speed(low), (high + 1, speed(high)) if high > low else None)


__all__ = ["LLAMA_LINE", "NothingToGoOn", "ServerLog", "ServerLogError", "WindowPrediction", "predictions", "read",
           "windows"]
