"""Which runner `--engine auto` should pick on a CPU: one forward pass per runner, by context length.

On the embedded demo pair (or any pair given with --target/--draft), each
runner caches a prefix of `context` random tokens, then forwards a window of q
tokens and rewinds, many times; runs are interleaved across runners so load
drifts hit all alike, and the median CPU time (`time.process_time`, one torch
thread: the steadier figure on a shared machine) is reported per forward.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/runners_cpu.py [--contexts 128,512,1536] [--repeats 60]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from gammatune_tui.engine.loading.models import load_pair  # noqa: E402
from gammatune_tui.engine.runners import build_runner  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target")
    ap.add_argument("--draft")
    ap.add_argument("--contexts", default="128,512,1536")
    ap.add_argument("--windows", default="1,5")
    ap.add_argument("--runners", default="eager,static,graph-body")
    ap.add_argument("--repeats", type=int, default=60)
    args = ap.parse_args()
    torch.set_num_threads(1)
    pair = load_pair(args.target, args.draft, device="cpu", dtype="float32", threads=1, warmup=False)
    contexts = [int(c) for c in args.contexts.split(",")]
    windows = [int(q) for q in args.windows.split(",")]
    kinds = args.runners.split(",")
    print(f"{pair.name_target} / {pair.name_draft}; {platform.machine()}, {os.cpu_count()} cores; torch "
          f"{torch.__version__}; 1 thread; load average {os.getloadavg()[0]:.2f}\n")
    print("| model | context | q | " + " | ".join(f"{k} µs" for k in kinds) + " | static / eager |")
    print("|---|---:|---:|" + "---:|" * len(kinds) + "---:|")
    vocab = int(pair.target.config.vocab_size)
    ids = torch.randint(0, vocab, (1, max(contexts) + max(windows)), generator=torch.Generator().manual_seed(0))
    for name, model in (("target", pair.target), ("draft", pair.draft)):
        runners = {k: build_runner(k, model) for k in kinds}
        for ctx in contexts:
            for r in runners.values():
                r.start(ctx + max(windows))
                r.prefill(ids[:, :ctx])
            for q in windows:
                times: dict[str, list[float]] = {k: [] for k in kinds}
                for _ in range(args.repeats + 2):
                    for k, r in runners.items():
                        c0 = time.process_time()
                        r.forward(ids[:, ctx:ctx + q], q)
                        r.rewind(ctx)
                        times[k].append(time.process_time() - c0)
                med = {k: statistics.median(v[2:]) * 1e6 for k, v in times.items()}
                ratio = f"{med['static'] / med['eager']:.2f}" if {"static", "eager"} <= set(med) else ""
                print(f"| {name} | {ctx} | {q} | " + " | ".join(f"{med[k]:,.0f}" for k in kinds) + f" | {ratio} |")
    print(f"\nload average afterwards {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
