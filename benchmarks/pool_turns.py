"""The n-gram pool against prompt lookup over a conversation's turns: tokens per step, one decoder per drafter.

The demo pair's target, greedy, raw prompts (no history in them): the `code`
set's first three prompts asked as turns 1, 2, 1, 3, 2, so two questions come
again. Counts, not timings, so a busy machine does not move them
(docs/benchmarks.md, "Prompt lookup"):

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/pool_turns.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent, load_pair  # noqa: E402
from gammatune_tui.prompts import load_prompt_set  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--method", default="gammatune+")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    args = ap.parse_args()
    pair = load_pair(demo=True, device="cpu", dtype="float32", threads=1, drafter="prompt-lookup")
    ids = [pair.encode_prompt(p.turns[0], raw=True) for p in load_prompt_set("code")[:3]]
    turns = [ids[0], ids[1], ids[0], ids[2], ids[1]]
    for drafter in ("prompt-lookup", "ngram-pool"):
        dec = SpeculativeDecoder(pair, PolicySettings.build(args.method, 4), SamplingConfig(), drafter=drafter)
        row = []
        for i, t in enumerate(turns):
            steps = [e for e in dec.generate(list(t), args.max_new_tokens, turn=i) if isinstance(e, StepEvent)]
            tokens = sum(len(e.emitted) for e in steps)
            row.append(f"{tokens / len(steps):.2f} ({tokens}/{len(steps)})")
        print(f"{drafter:14}", "  ".join(row))


if __name__ == "__main__":
    main()
