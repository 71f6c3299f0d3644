"""The demo pair's traces for its default prompt set, shipped in the package: a first `bench --simulate` only replays.

Recording the 30 code prompts' traces is most of a first `--simulate` (845 s
on a busy 2-core machine), yet for the shipped pair they are the same
everywhere: greedy decoding of the same weights over the same prompt ids at
the default budget. So they ship as `shipped/*.json.gz` (made by
benchmarks/ship_traces.py, and checked against a fresh recording by
tests/bench/test_shipped_traces.py). What cannot ship is this machine's
speed: each trace's time outside the steps (header, both prefills) is
measured here again, and the decoder gets its usual timing passes.

They are used only where a recording here would give the same traces: the
same weights (by content), dtype, device type, prompt ids, token budget and
enough depth for the windows asked for, greedy, with the draft model
drafting. Anything else records as before; `--refresh-traces` always does.
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ...engine.common.pair import ModelPair
from ...engine.events.text_pieces import prompt_pieces

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"
# what must match between the shipped key and this run's (trace_cache.trace_key): not the machine's versions,
# runner or threads, which change the timings (measured here) but not greedy traces on the CPU
MATCHED = ("format", "target", "draft", "target_weights", "draft_weights", "device", "dtype", "max_new_tokens")


def shipped_key(key: dict[str, Any]) -> dict[str, Any]:
    """The part of a trace key that a shipped file is made for (its prompts are matched one by one)."""
    return {k: key.get(k) for k in MATCHED}


def _candidates() -> list[Path]:
    return sorted(SHIPPED_DIR.glob("*.json.gz")) if SHIPPED_DIR.is_dir() else []


def read_shipped(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def find_shipped(key: dict[str, Any], max_window: int) -> tuple[Path, list[dict[str, Any]]] | None:
    """The shipped file and the traces (as JSON) for every prompt of `key`, in its order; None when any is missing."""
    if "sampling" in key or "drafter" in key or "self_draft" in key:
        return None
    want = shipped_key(key)
    for path in _candidates():
        try:
            data = read_shipped(path)
        except (OSError, ValueError):
            continue
        if data.get("key") != want or data.get("max_window", 0) < max_window:
            continue
        by_prompt = {t["prompt_id"]: t for t in data.get("traces", [])}
        picked = []
        for pid, ids in key.get("prompts", []):
            t = by_prompt.get(pid)
            if t is None or list(t.get("prompt_ids", [])) != list(ids):
                break
            picked.append(t)
        else:
            if picked:
                return path, picked
    return None


def session_seconds(pair: ModelPair, ids: list[int]) -> float:
    """What a trace's `session_s` holds, measured on this machine: the header's text pieces and both prefills."""
    import torch

    from ...engine.plain import prefilled

    assert pair.draft is not None, "a shipped trace is of a pair with a draft model"
    device = torch.device(pair.device)
    t0 = time.perf_counter()
    prompt_pieces(pair.tokenizer, ids)
    with torch.no_grad():
        prefilled(pair.target, list(ids), device)
        prefilled(pair.draft, list(ids), device)
    return time.perf_counter() - t0


def load_shipped(err: Console, pair: ModelPair, pid: list, key: dict[str, Any], max_window: int) -> list | None:
    """The shipped traces for these prompts with this machine's per-session times, or None when none fit."""
    from ..sim.trace_kinds import trace_from_json

    found = find_shipped(key, max_window)
    if found is None:
        return None
    path, rows = found
    traces = [trace_from_json(t) for t in rows]
    for trace, p in zip(traces, pid):
        trace.session_s = session_seconds(pair, list(p.ids))
    err.print(Text(f"using the demo pair's {len(traces)} shipped traces ({path.name}); timing the decoder here "
                   "(--refresh-traces records them instead)", style="dim"))
    return traces
