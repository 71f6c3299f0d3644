"""The decoder alone, tokens per CPU-second: for comparing two checkouts of gammatune on one machine.

No UI, no transformers `generate` beside it: the embedded demo pair, greedy,
one method at γ0 = 4, the first N prompts of the `code` set, each run
decoded whole; a warm-up run, then the median of --repeats. The checkout
measured is the one PYTHONPATH names (this file's own otherwise), so one
copy of the script times both; alternate them, so that drift on a shared
machine hits both (docs/history/README.md, "After the house (issue 25): not slower"):

    for i in 1 2; do for d in ../before .; do PYTHONPATH=$d OMP_NUM_THREADS=1 \\
        .venv/bin/python benchmarks/decoder_speed.py; done; done
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: the checkout it names is measured

import torch  # noqa: E402

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent, load_pair  # noqa: E402
from gammatune_tui.prompts import load_prompt_set  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--method", default="gammatune+")
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    pair = load_pair(demo=True, device="cpu", dtype="float32", threads=1)
    prompts = [pair.encode_prompt(p.text, raw=True) for p in load_prompt_set("code")[: args.prompts]]

    def once() -> float:
        tokens, c0 = 0, time.process_time()
        for ids in prompts:
            dec = SpeculativeDecoder(pair, PolicySettings.build(args.method, 4), SamplingConfig())
            for ev in dec.generate(ids, max_new_tokens=args.max_new_tokens):
                if isinstance(ev, StepEvent):
                    tokens += len(ev.emitted)
        return tokens / (time.process_time() - c0)

    once()  # warm-up: allocators, first-call paths
    runs = [once() for _ in range(args.repeats)]
    print(f"{args.method}: {statistics.median(runs):.1f} tokens per CPU-second "
          f"(median of {', '.join(f'{r:.1f}' for r in runs)}; load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
