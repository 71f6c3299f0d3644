"""One EAGLE-3 drafting step against one target step at a Qwen3-1.7B shape on this CPU (random weights).

The target: Qwen3-1.7B's config (hidden 2048, 28 layers, 16 heads / 8 KV heads, head_dim 128, intermediate
6144, vocabulary 151,936) with random weights, in `--dtype` (bfloat16 by default: fp32 would need 7 GB). The
head: one Llama layer at hidden 2048, fc over three target layers, a 32,000-token draft vocabulary (as
AngelSlim/Qwen3-1.7B_eagle3 ships), written in SafeAILab's format and read by gammatune's loader.

Timed, alternating, after a warm-up, at a context of `--context` tokens:
- target: one decode step (one token through the model with its KV cache), what a γ-token verify costs
  at least;
- draft: one chained drafting step of the source (the layer over one position with its KV cache, the head's
  norm and projection over its 32k vocabulary, the logits placed at their d2t ids over the target's 152k
  vocabulary and the softmax there: what `Eagle3Source.draft` does per token).

    python benchmarks/eagle3_step.py [--device cuda] [--dtype bfloat16] [--context 256] [--repeats 20]
"""

from __future__ import annotations

import argparse
import atexit
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", help="cpu or cuda (each timing then ends in a device sync)")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--draft-vocab", type=int, default=32000)
    args = ap.parse_args()
    import torch
    from transformers import DynamicCache

    from gammatune_tui.engine.common.sampling import Served
    from gammatune_tui.engine.common.sampling_config import SamplingConfig
    from gammatune_tui.engine.drafting.eagle3 import Eagle3Source
    from gammatune_tui.engine.drafting.eagle3_head import Eagle3Head, HeadCache, check_head
    from gpu_steps import sync
    from step_parts import QWEN3_1P7B, alternate, build_target, target_step
    from tiny_eagle3 import write_head

    dtype = getattr(torch, args.dtype)
    dev = torch.device(args.device)
    target = build_target("qwen3", QWEN3_1P7B, dtype, dev)
    cfg = target.config
    h, v, dv = cfg.hidden_size, cfg.vocab_size, args.draft_vocab
    g = torch.Generator().manual_seed(1)

    def w(*shape):
        return (torch.randn(*shape, generator=g) * 0.02).to(dtype)

    heads, kv, hd, inter = cfg.num_attention_heads, cfg.num_key_value_heads, 128, cfg.intermediate_size
    ids = torch.arange(dv) * (v // dv)
    tensors = {"fc.weight": w(h, 3 * h), "midlayer.hidden_norm.weight": torch.ones(h, dtype=dtype),
               "midlayer.input_layernorm.weight": torch.ones(h, dtype=dtype),
               "midlayer.post_attention_layernorm.weight": torch.ones(h, dtype=dtype),
               "midlayer.self_attn.q_proj.weight": w(heads * hd, 2 * h),
               "midlayer.self_attn.k_proj.weight": w(kv * hd, 2 * h),
               "midlayer.self_attn.v_proj.weight": w(kv * hd, 2 * h),
               "midlayer.self_attn.o_proj.weight": w(h, heads * hd),
               "midlayer.mlp.gate_proj.weight": w(inter, h), "midlayer.mlp.up_proj.weight": w(inter, h),
               "midlayer.mlp.down_proj.weight": w(h, inter), "norm.weight": torch.ones(h, dtype=dtype),
               "lm_head.weight": w(dv, h), "d2t": ids - torch.arange(dv)}
    folder = Path(tempfile.mkdtemp(prefix="eagle3-step-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)   # 0.7 GB at the real shape
    write_head(folder, target, tensors, "safeailab", (2, 14, 25))
    spec = check_head(folder, target.config)
    head = Eagle3Head(target, spec)
    src = Eagle3Source(target, head, spec, spec.depths(28))
    served = Served(SamplingConfig(temperature=0.0))

    n = args.context
    with torch.inference_mode():
        prompt = torch.randint(0, v, (1, n)).to(dev)
        cache = DynamicCache(config=cfg)
        target(prompt, cache=cache, use_cache=True)
        feats = torch.randn(n, 3 * h, dtype=dtype, device=dev)
        head.step(feats, prompt[0], src.cache, 0)   # the head's cache over the same context

        last = torch.randn(h, dtype=dtype, device=dev)

        def draft_step() -> float:
            sync(dev)
            t = time.perf_counter()
            probs = src._law(last, served)
            x = int(probs.argmax())
            head.step(last.unsqueeze(0), torch.tensor([x], device=dev), src.cache, n)
            sync(dev)
            dt = time.perf_counter() - t
            src.cache.crop(n)
            return dt

        ts, ds = alternate(target_step(target, cache, dev), draft_step, warm=3, repeats=args.repeats)
    mt, md = statistics.median(ts), statistics.median(ds)
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    print(f"{where}, {args.dtype}, context {n}, {args.repeats} alternating repeats, load after {os.getloadavg()}")
    print(f"target step  median {mt * 1e3:.1f} ms (min {min(ts) * 1e3:.1f}, max {max(ts) * 1e3:.1f})")
    print(f"draft step   median {md * 1e3:.1f} ms (min {min(ds) * 1e3:.1f}, max {max(ds) * 1e3:.1f})")
    print(f"draft / target = {md / mt:.3f}")


if __name__ == "__main__":
    main()
