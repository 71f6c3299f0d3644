"""One DFlash drafting step against one target step at a Qwen3-1.7B shape on this CPU (random weights; issue 45).

The target: Qwen3-1.7B's config (hidden 2048, 28 layers, 16 heads / 8 KV heads, head_dim 128, intermediate 6144,
vocabulary 151,936) with random weights, in `--dtype` (bfloat16 by default). The drafter: transformers'
`muse_glimmer_assistant` at the same hidden size, `--layers` layers (5, as z-lab's drafters), block `--block`
(16), reading five target layers, written as a safetensors folder (tests/tiny_dflash.py) and read by
gammatune's loader.

Timed, alternating, after a warm-up, at a context of `--context` tokens:
- target: one decode step (one token through the model with its KV cache);
- a block: what `DFlashSource.draft` does once per block — the step's new context row into the drafter's cache,
  one forward over [anchor, mask × (block − 1)], the target's LM head over the block's positions, and the
  softmax and argmax at each of them. A block drafts block − 1 tokens, so its cost per drafted token is
  the block's cost over block − 1.

    python benchmarks/dflash_step.py [--dtype bfloat16] [--context 256] [--repeats 15] [--block 16] [--layers 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--layers", type=int, default=5)
    args = ap.parse_args()
    import torch
    from transformers import DynamicCache

    from gammatune_tui.engine.drafting.dflash import DFlashSource, drafter_of
    from step_parts import QWEN3_1P7B, alternate, build_target, default_dtype, target_step
    from tiny_dflash import write_dflash

    dtype = getattr(torch, args.dtype)
    target = build_target("qwen3", QWEN3_1P7B, dtype)
    cfg = target.config
    folder = Path(tempfile.mkdtemp(prefix="dflash-step-"))
    try:
        with default_dtype(dtype):
            write_dflash(folder, target, layer_ids=(1, 7, 13, 19, 25), block_size=args.block, layers=args.layers,
                         mask_token_id=151669, init=0.02)
        src = DFlashSource(target, drafter_of(target, str(folder)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    width = src.model.encoder.fc.in_features
    n, v = args.context, cfg.vocab_size
    with torch.inference_mode():
        prompt = torch.randint(0, v, (1, n))
        cache = DynamicCache(config=cfg)
        target(prompt, cache=cache, use_cache=True)
        src.waiting = list(torch.randn(n, width, dtype=dtype).unbind(0))   # the drafter's context over the prompt
        src._block_logits(5, n)
        row = torch.randn(width, dtype=dtype)

        def block() -> float:
            src.waiting = [row]   # one accepted position's row, as after a step that accepted nothing
            t = time.perf_counter()
            logits = src._block_logits(7, n + 1)
            for i in range(len(logits)):
                int(torch.softmax(logits[i], dim=-1).argmax())
            dt = time.perf_counter() - t
            src.cache.crop(-1)   # back to the prompt's context
            src.done -= 1
            return dt

        ts, bs = alternate(target_step(target, cache), block, warm=2, repeats=args.repeats)
    mt, mb = statistics.median(ts), statistics.median(bs)
    per = mb / (args.block - 1)
    print(f"CPU, {args.dtype}, context {n}, drafter {args.layers} layers, block {args.block}, {args.repeats} "
          f"alternating repeats, load after {os.getloadavg()[0]:.2f}\n")
    print("| part | ms (median) | of a target step |\n|---|---:|---:|")
    print(f"| target step | {mt * 1e3:.1f} | 1.000 |")
    print(f"| a block ({args.block - 1} drafted tokens) | {mb * 1e3:.1f} | {mb / mt:.3f} |")
    print(f"| per drafted token | {per * 1e3:.1f} | {per / mt:.3f} |")


if __name__ == "__main__":
    main()
