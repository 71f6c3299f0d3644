"""Traces and the decoder's cost calibration, recorded once and kept in the user's cache directory.

`bench --simulate` plays every policy exactly over greedy traces in about a
second, but recording the traces (a target decode, a teacher-forced draft
pass and the off-path drafts per prompt) and timing the decoder takes far
longer — most of a first run. Neither changes while the pair, the prompts,
the token budget, the depth, the machine's settings and the versions stay
the same, so they are kept per such key in `$GAMMATUNE_CACHE_DIR`, else
`$XDG_CACHE_HOME/gammatune`, else `~/.cache/gammatune` (under `traces/`):
a second `--simulate`, and `--tune` after it, start from them.
`--refresh-traces` records them again; `--traces FILE` keeps them in a file
of the user's choosing instead.

The key names the models by path and by their weights' sizes and
modification times (a retrained model in the same directory is a new key),
the prompts by their token ids, and the device, dtype, runner, torch threads
and versions the timings were taken with.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ...engine.draft_sources import pair_drafter
from ...engine.policies import PolicySettings
from ...engine.step_events import versions
from ...engine.text_pieces import prompt_pieces
from ...errors import InvalidParameter
from ...resources import CACHE_ENV, cache_root  # noqa: F401  (one answer to where the cache is)
from .. import protocol
from .. import trace_record
from ..cost_model import CALIBRATION_GAMMAS, CostModel, calibrate
from ..lookup_trace import record_lookup_trace, trace_from_json
from .common import progress_bar

FORMAT = 1


def _weights_fingerprint(model: Any) -> list[list[Any]]:
    """Name, size and modification time of each weight file the model was loaded from (empty when unknown)."""
    path = getattr(getattr(model, "config", None), "_name_or_path", "") or getattr(model, "name_or_path", "")
    d = Path(str(path)) if path else None
    if d is None or not d.is_dir():
        return []
    out = []
    for f in sorted(list(d.glob("*.safetensors")) + list(d.glob("*.bin"))):
        st = f.stat()
        out.append([f.name, st.st_size, st.st_mtime_ns])
    return out


def trace_key(pair: Any, pid: list, max_new_tokens: int) -> dict[str, Any]:
    """Everything the traces and the timings depend on (the depth is stored beside it: deeper serves shallower)."""
    import torch

    drafter = pair_drafter(pair)
    return {
        "format": FORMAT,
        "target": str(pair.name_target), "draft": str(pair.name_draft),
        "target_weights": _weights_fingerprint(pair.target), "draft_weights": _weights_fingerprint(pair.draft),
        "device": str(pair.device), "dtype": str(pair.dtype),
        "runner": str(getattr(pair, "runner", "") or ""), "threads": torch.get_num_threads(),
        "versions": versions(),
        "prompts": [[p.id, list(p.ids)] for p in pid],
        "max_new_tokens": max_new_tokens,
        # prompt lookup: its own kind of trace, for these n-gram sizes
        **({"drafter": {"name": drafter.name, **drafter.params()}} if drafter.model_free else {}),
    }


def cache_file(key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:20]
    return cache_root() / "traces" / f"{digest}.json"


@dataclass
class TraceSet:
    """Traces, the cost model priced from them, and where they came from."""

    traces: list
    cost: CostModel
    source: str            # "recorded", "cache" or "file"
    path: Path | None = None
    seconds: float = 0.0   # what recording them took (now, or when they were recorded)


def _read(path: Path, key: dict[str, Any], max_window: int) -> TraceSet | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("key") != key or data.get("max_window", 0) < max_window:
        return None
    traces = [trace_from_json(t) for t in data["traces"]]
    return TraceSet(traces, CostModel.from_json(data["cost_model"]), "file", path, float(data.get("record_s", 0.0)))


def _write(path: Path, key: dict[str, Any], max_window: int, ts: TraceSet) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"key": key, "max_window": max_window, "cost_model": ts.cost.to_json(),
                               "record_s": ts.seconds, "created": time.time(),
                               "traces": [t.to_json() for t in ts.traces]}), encoding="utf-8")
    os.replace(tmp, path)   # a run cut short never leaves half a file behind


def record(err: Console, pair: Any, pid: list, max_new_tokens: int, max_window: int) -> TraceSet:
    """One trace per prompt, then the timing pass (specdecode at a few windows on the first prompt)."""
    t_start = time.perf_counter()
    drafter = pair_drafter(pair)
    traces = []
    with progress_bar(err) as prog:
        task = prog.add_task("recording traces", total=len(pid) + 2)
        protocol.warm_up(pair, pid[0], protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                            baselines=()))
        for p in pid:
            t0 = time.perf_counter()
            prompt_pieces(pair.tokenizer, p.ids)
            header_s = time.perf_counter() - t0
            if drafter.model_free:
                traces.append(record_lookup_trace(pair, p.id, p.ids, max_new_tokens, max_window, pair.eos_ids,
                                                  drafter.ngram_min, drafter.ngram_max, header_s))
            else:
                traces.append(trace_record.record_trace(pair, p.id, p.ids, max_new_tokens, max_window - 1,
                                                        pair.eos_ids, header_s))
            prog.update(task, advance=1, description=f"trace {p.id}")
        prog.update(task, description="timing the decoder")
        events: list = []
        for g in CALIBRATION_GAMMAS:
            if g <= max_window:
                protocol.run_policy(pair, PolicySettings.build("specdecode", g), pid[0], max_new_tokens,
                                    keep_events=events)
        cost = calibrate(events)
        cost.session_s = max(0.0, cost.outside_s - traces[0].session_s)
        prog.update(task, advance=2)
    return TraceSet(traces, cost, "recorded", None, time.perf_counter() - t_start)


def load_or_record(err: Console, pair: Any, pid: list, max_new_tokens: int, max_window: int,
                   traces_path: Path | None = None, refresh: bool = False) -> TraceSet:
    """The traces for this key: from `traces_path` or the cache when they match, else recorded (and kept)."""
    key = trace_key(pair, pid, max_new_tokens)
    path = traces_path if traces_path is not None else cache_file(key)
    if path.exists() and not refresh:
        try:
            found = _read(path, key, max_window)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if traces_path is not None:
                raise InvalidParameter(f"--traces {traces_path}: unreadable trace file ({exc})") from None
            found = None   # a damaged cache entry is recorded again
        if found is not None:
            found.source = "file" if traces_path is not None else "cache"
            err.print(Text(f"using the traces and cost model in {path} (recorded in {found.seconds:.0f} s; "
                           "--refresh-traces records them again)", style="dim"))
            return found
        if traces_path is not None:
            err.print(Text(f"{traces_path} was recorded for other models, prompts, budget, windows or versions; "
                           "recording again", style="yellow"))
    ts = record(err, pair, pid, max_new_tokens, max_window)
    try:
        _write(path, key, max_window, ts)
        ts.path = path
        err.print(Text(f"recorded {len(ts.traces)} traces and the cost model in {ts.seconds:.0f} s; kept in {path}",
                       style="dim"))
    except OSError as exc:
        if traces_path is not None:
            raise InvalidParameter(f"--traces {traces_path}: cannot write ({exc.strerror or exc})") from None
        err.print(Text(f"note: could not keep the traces in {path} ({exc.strerror or exc})", style="yellow"))
    return ts


__all__ = ["CACHE_ENV", "cache_root", "cache_file", "trace_key", "TraceSet", "record", "load_or_record"]
