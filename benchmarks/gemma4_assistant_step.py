"""One Gemma 4 assistant drafting step against one target step at a Gemma 4 E2B text shape on this CPU (random
weights; issue 45).

The target: Gemma 4 E2B's text stack as its config gives it (hidden 1536, 35 layers in the pattern 4 sliding + 1
full, the last 20 reusing the keys of the 15 before, 8 heads over 1 key-value head, head size 256 (512 on full
layers), intermediate 6144, vocabulary 262,144, window 512), without the per-layer input tables (lookups, not
compute; they would add 4.7 GB here). The assistant: 4 layers 256 wide (3 sliding, 1 full), reading the target's
store layers, with the 2,048-centroid ordered head (top 32), written as a safetensors folder (tests/tiny_gemma4.py)
and read by gammatune's loader; `--no-centroids` for the plain LM head over the whole vocabulary.

Timed, alternating, after a warm-up, at a context of `--context` tokens:
- target: one decode step (one token through the model with its KV cache);
- a draft step: what `Gemma4AssistantSource.draft` does per drafted token — one assistant forward of one token
  over the target's keys, its logits' softmax and argmax.

    python benchmarks/gemma4_assistant_step.py [--dtype bfloat16] [--context 256] [--repeats 10] [--no-centroids]
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

LAYERS, SHARED = 35, 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--no-centroids", action="store_true")
    args = ap.parse_args()
    import torch
    from transformers import DynamicCache

    from gammatune_tui.engine.drafting.gemma4_assistant import Gemma4AssistantSource, assistant_of
    from gammatune_tui.engine.runners.hidden import TargetRows
    from step_parts import alternate, build_target, default_dtype, target_step
    from tiny_gemma4 import write_assistant

    dtype = getattr(torch, args.dtype)
    kinds = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(LAYERS)]
    target = build_target("gemma4_text", dict(
        vocab_size=262144, vocab_size_per_layer_input=0, hidden_size_per_layer_input=0, hidden_size=1536,
        intermediate_size=6144, num_hidden_layers=LAYERS, num_attention_heads=8, num_key_value_heads=1, head_dim=256,
        global_head_dim=512, layer_types=kinds, sliding_window=512, num_kv_shared_layers=SHARED,
        tie_word_embeddings=True, max_position_embeddings=8192, initializer_range=0.02), dtype)
    folder = Path(tempfile.mkdtemp(prefix="g4-step-"))
    try:
        with default_dtype(dtype):
            write_assistant(folder, target, centroids=0 if args.no_centroids else 2048, init=0.02, hidden=256,
                            layers=4, top_k=32)
        src = Gemma4AssistantSource(target, assistant_of(target, str(folder)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    n, v = args.context, target.config.vocab_size
    with torch.inference_mode():
        cache = DynamicCache()
        out = target(torch.randint(0, v, (1, n)), cache=cache, use_cache=True, output_hidden_states=True)
        layers = cache.layers
        src.observe(TargetRows(0, out.hidden_states[-1][0, -1:, None],
                               tuple((layers[i].keys, layers[i].values) for i in src.reads.kv)))
        row = src.row
        assert row is not None

        def draft_step() -> float:
            t = time.perf_counter()
            logits, _ = src._step(7, row)
            int(torch.softmax(logits, dim=-1).argmax())
            return time.perf_counter() - t

        ts, ds = alternate(target_step(target, cache), draft_step, warm=2, repeats=args.repeats)
    mt, md = statistics.median(ts), statistics.median(ds)
    head = "plain LM head" if args.no_centroids else "2,048 centroids, top 32"
    print(f"CPU, {args.dtype}, context {n}, assistant 4 layers ({head}), {args.repeats} alternating repeats, "
          f"load after {os.getloadavg()[0]:.2f}\n")
    print("| part | ms (median) | of a target step |\n|---|---:|---:|")
    print(f"| target step | {mt * 1e3:.1f} | 1.000 |")
    print(f"| assistant draft step | {md * 1e3:.2f} | {md / mt:.3f} |")


if __name__ == "__main__":
    main()
