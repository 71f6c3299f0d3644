"""Make the demo pair's shipped traces (gammatune_tui/bench/modes/shipped/) for its default prompt set.

`bench --simulate` on the demo pair replays these instead of recording them
(bench/modes/shipped_traces.py says why that is sound). Run it after changing
the demo pair, its prompts, the trace format or how traces are recorded:

    .venv/bin/python benchmarks/ship_traces.py [--from CACHE_FILE]

It takes the traces from the user cache when a `bench --simulate` on the
demo pair has just recorded them (or from --from FILE), else records them
(about 15 min on a busy 2-core machine), and writes them gzipped without
the machine's timings' key fields. tests/bench/test_shipped_traces.py
checks the file against a fresh recording.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from rich.console import Console

from gammatune_tui.bench.live.protocol import PromptIds
from gammatune_tui.bench.modes import trace_cache
from gammatune_tui.bench.modes.shipped_traces import SHIPPED_DIR, shipped_key
from gammatune_tui.commands.bench import DEFAULT_GAMMAS
from gammatune_tui.commands.options import default_options
from gammatune_tui.engine.loading.models import load_pair
from gammatune_tui.engine.policies import PolicyParams
from gammatune_tui.prompts import load_prompt_set

SET = "code"   # the demo pair's default set (commands/bench.py)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="source", type=Path, help="a trace file kept by `bench --simulate`")
    args = ap.parse_args()
    opts = default_options()
    pair = load_pair(**opts.load_kwargs())
    pid = [PromptIds(p.id, pair.encode_prompt(p.text, raw=False)) for p in load_prompt_set(SET)]
    max_new = opts.max_new_tokens
    max_window = max(max(int(g) for g in DEFAULT_GAMMAS.split(",")), PolicyParams.build().gamma_max)
    key = trace_cache.trace_key(pair, pid, max_new)
    source = args.source or trace_cache.cache_file(key)
    if source.exists():
        data = json.loads(source.read_text(encoding="utf-8"))
        if shipped_key(data["key"]) != shipped_key(key) or data["key"]["prompts"] != key["prompts"]:
            print(f"{source} holds traces of other weights, prompts or budget", file=sys.stderr)
            return 2
        traces, depth = data["traces"], data["max_window"]
    else:
        ts = trace_cache.record(Console(stderr=True), pair, pid, max_new, max_window)
        traces, depth = [t.to_json() for t in ts.traces], max_window
    SHIPPED_DIR.mkdir(parents=True, exist_ok=True)
    out = SHIPPED_DIR / f"demo-{SET}.json.gz"
    payload = {"key": shipped_key(key), "max_window": depth, "prompt_set": SET, "traces": traces}
    with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as fh:
        fh.write(json.dumps(payload, separators=(",", ":")).encode("utf-8"))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {len(traces)} traces, depth {depth})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
