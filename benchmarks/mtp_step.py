"""Where an MTP step's time goes at the Qwen3.5-0.8B shape (issue 41, items 6 and 7): the head's layer, its
projection over the whole vocabulary, and the target's step and verify, on the CPU or a CUDA device.

The checkpoint: Qwen3.5-0.8B's text config (hidden 1024, 24 layers, three Gated DeltaNet layers to one full
attention layer, 8 heads / 2 KV heads of 256, intermediate 3584, a 248,320-token vocabulary, tied embeddings)
with random weights and a one-layer MTP head under the family's own `mtp.*` names, written as a safetensors
folder (tests/tiny_mtp.py) and read back by gammatune's loader, as `--draft mtp` reads a real one.

Timed after a warm-up, alternating, medians of `--repeats` (each timing ends in a device sync):
- target step: one token through the target with its cache (the runner gammatune picks for it);
- verify: a window of `--window` tokens, rewound after each (what a γ = window − 1 verify costs);
- head layer: one chained row through the head's decoder layer (MtpHead.extend);
- head projection: the head's norm and logits over the whole vocabulary, then the softmax (MtpHead.logits);
- a drafting step: both, as MtpSource.draft does per token (its law, the argmax, the token's statistics);
- with `--vocabs N,…` (default 32768,8192; FR-Spec, `--mtp-vocab N`): the projection over the N-token draft
  vocabulary and a drafting step with it, in the same alternation.
Then end to end, `--tokens` greedy tokens: gammatune with `--draft mtp` against gammatune's plain decoding,
each output compared with the target's own `generate`. Random weights: the head's acceptance here is what
random weights give, printed beside it; the step costs do not depend on it.

    python benchmarks/mtp_step.py [--device cuda] [--dtype bfloat16] [--small]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

QWEN35_08B = dict(hidden_size=1024, intermediate_size=3584, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
                  tie_word_embeddings=True, max_position_embeddings=4096, linear_num_key_heads=16,
                  linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
                  linear_conv_kernel_dim=4)
SMALL = dict(QWEN35_08B, hidden_size=128, intermediate_size=256, head_dim=32, linear_num_key_heads=4,
             linear_num_value_heads=4, linear_key_head_dim=32, linear_value_head_dim=32)


def main() -> None:  # noqa: C901 - one linear script
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--small", action="store_true", help="hidden 128, 4 layers, vocabulary 4096: the pipeline in seconds")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--vocabs", default=None,
                    help="reduced draft vocabularies to time (0 or '': none; default 32768,8192, with --small 1024,256)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    import torch
    import transformers

    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
    from gammatune_tui.engine.common.devices import resolve_device
    from gammatune_tui.engine.common.sampling import Served
    from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
    from gammatune_tui.engine.drafting.frspec import special_ids
    from gammatune_tui.engine.drafting.mtp import MtpSource, head_of
    from gammatune_tui.engine.loading.models import ModelPair
    from gammatune_tui.engine.plain import plain_decode
    from gammatune_tui.engine.runners import build_runner, choose_kind
    from gpu_engine import word_tokenizer
    from gpu_steps import sync
    from step_parts import default_dtype
    from tiny_mtp import write_mtp_checkpoint

    transformers.utils.logging.set_verbosity_error()
    device = resolve_device(args.device)
    dtype = getattr(torch, args.dtype)
    cuda = device.type == "cuda"
    name = torch.cuda.get_device_name(device) if cuda else f"CPU, {os.cpu_count()} cores, {torch.get_num_threads()} threads"
    layers, vocab = (4, 4096) if args.small else (24, 248320)
    if args.vocabs is None:
        args.vocabs = "1024,256" if args.small else "32768,8192"
    try:
        vocabs = [int(v) for v in args.vocabs.split(",") if v.strip() and int(v) > 0]
    except ValueError:
        ap.error(f"--vocabs takes whole numbers, got {args.vocabs!r}")
    if any(v >= vocab for v in vocabs):
        ap.error(f"--vocabs {args.vocabs}: a reduced vocabulary must be below the model's {vocab:,} tokens")
    shape = dict(SMALL if args.small else QWEN35_08B)
    shape["layer_types"] = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)]
    shape["layer_types"].append("full_attention")   # the head's layer is a full-attention one, as the real head

    t0 = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="mtp-step-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)   # 1.5 GB (bf16) to 3 GB (fp32) at the real shape
    with default_dtype(dtype):
        target = write_mtp_checkpoint("qwen3_5_text", folder, seed=0, layers=layers, hidden=shape["hidden_size"],
                                      init=0.02, vocab=vocab, shape=shape)
    target = target.to(device).eval()
    target.generation_config.eos_token_id = None
    pair = ModelPair(target=target, draft=None, tokenizer=word_tokenizer(vocab), device=device, dtype=dtype,
                     eos_ids=frozenset(), name_target="random Qwen3.5-0.8B shape", name_draft="mtp")
    head = head_of(target)
    print(f"# MTP step at the {'small' if args.small else 'Qwen3.5-0.8B'} shape on {name} ({args.dtype}; torch "
          f"{torch.__version__}, transformers {transformers.__version__}); checkpoint written and read in "
          f"{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f}\n", flush=True)

    g = torch.Generator().manual_seed(0)
    n, w = args.context, args.window
    ids = torch.randint(0, vocab, (1, n + w + 1), generator=g).to(device)
    served = Served(SamplingConfig(temperature=0.0))
    res: dict = {"device": name, "dtype": args.dtype, "small": args.small, "context": n, "window": w,
                 "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    with torch.inference_mode():
        kind = choose_kind("eager", target, device)
        r = build_runner(kind, target)
        r.start(n + w + 8)
        r.prefill(ids[:, :n])
        head.reset()
        head.extend(torch.randn(n, shape["hidden_size"], generator=g).to(device, dtype), ids[0, 1:n + 1].tolist())
        row = torch.randn(shape["hidden_size"], generator=g).to(device, dtype)

        def timed(fn):
            sync(device)
            t = time.perf_counter()
            fn()
            sync(device)
            return time.perf_counter() - t

        def target_step():
            r.forward(ids[:, n:n + 1], 1)
            r.rewind(n)

        def verify():
            r.forward(ids[:, n:n + w], w)
            r.rewind(n)

        def layer():
            head.extend(row.unsqueeze(0), [5])
            head.keep(n)

        def drafting(source):
            def projection():
                source.law(row, served)

            def draft_step():   # what chain_draft does per token, then the head's layer on the drafted token
                probs = source.law(row, served)
                x = int(probs.argmax())
                float(probs.max()), float(probs[x]), float(torch.special.entr(probs).sum())
                head.extend(row.unsqueeze(0), [x])
                head.keep(n)
            return projection, draft_step

        full_proj, full_step = drafting(MtpSource(target, head))
        parts = {"target step": target_step, f"verify ({w} tokens)": verify, "head layer": layer,
                 "head projection + softmax": full_proj, "drafting step": full_step}
        for nv in vocabs:
            proj, step = drafting(MtpSource(target, head, vocab=head.draft_vocab(nv, special_ids(pair.tokenizer, ()))))
            parts[f"projection + softmax, vocabulary {nv:,}"] = proj
            parts[f"drafting step, vocabulary {nv:,}"] = step
        for fn in parts.values():
            for _ in range(3):
                fn()
        times: dict[str, list[float]] = {k: [] for k in parts}
        for _ in range(args.repeats):
            for k, fn in parts.items():
                times[k].append(timed(fn))
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    ts = med["target step"]
    res["runner"] = r.label if hasattr(r, "label") else kind
    res["ms"] = med
    print(f"runner {res['runner']}, context {n}, {args.repeats} alternating repeats\n")
    print("| part | ms (median) | of a target step |\n|---|---:|---:|")
    for k, v in med.items():
        print(f"| {k} | {v:.3f} | {v / ts:.3f} |")
    share = med["head projection + softmax"] / max(med["drafting step"], 1e-9)
    print(f"\nthe projection over {vocab:,} tokens is {share:.0%} of a drafting step; "
          f"c({w}) = verify / target step = {med[f'verify ({w} tokens)'] / ts:.2f}\n", flush=True)
    res["projection_share"] = share
    res["load_after"] = os.getloadavg()[0]
    print(f"load average after the timings {res['load_after']:.2f}\n", flush=True)
    dump(args, res)

    prompt = torch.randint(0, vocab, (48,), generator=g).tolist()
    x = torch.tensor([prompt], device=device)
    with torch.inference_mode():
        ref = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=args.tokens,
                              pad_token_id=0)[0, len(prompt):].tolist()
    res["end_to_end"] = {}
    print(f"| {args.tokens} greedy tokens | tokens/s | acceptance | = target.generate |\n|---|---:|---:|---|")
    labels = ["plain", "mtp, γ0 = 1", "mtp, gammatune γ0 = 3", *(f"mtp, γ0 = 1, vocabulary {nv:,}" for nv in vocabs)]
    for label in labels:
        for attempt in range(2):   # the first run warms up; the second is timed
            sync(device)
            t = time.perf_counter()
            if label == "plain":
                out, acc = plain_decode(pair, prompt, args.tokens).token_ids, None
            else:
                method, g0 = ("specdecode", 1) if "γ0 = 1" in label else ("gammatune", 3)
                nv = int(label.rsplit(" ", 1)[1].replace(",", "")) if "vocabulary" in label else 0
                dec = SpeculativeDecoder(pair, PolicySettings.build(method, g0), SamplingConfig(),
                                         drafter=DrafterSettings("mtp", mtp_vocab=nv) if nv else "mtp")
                evs = list(dec.generate(prompt, max_new_tokens=args.tokens))
                out = [tk.id for e in evs if isinstance(e, StepEvent) for tk in e.emitted]
                acc = evs[-1].accepted / max(1, evs[-1].drafted)
            sync(device)
            dt = time.perf_counter() - t
        tps = len(out) / dt
        res["end_to_end"][label] = {"tokens_per_s": tps, "acceptance": acc, "identical": out == ref}
        print(f"| {label} | {tps:,.1f} | {'' if acc is None else f'{acc:.2f}'} | {'yes' if out == ref else 'no'} |",
              flush=True)
    dump(args, res)
    if dtype != torch.float32:
        print(f"\n(in {args.dtype} a window and a single token round differently: after a near-tie, which random "
              "weights make common, greedy text may part from generate's; exactness is checked in float32)")


def dump(args, res: dict) -> None:
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
