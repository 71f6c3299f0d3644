"""Engine speed: SpeculativeDecoder vs transformers' assisted generation vs plain target decoding.

Same pair, same prompts, same process, greedy, interleaved runs:

  ours      SpeculativeDecoder, hf-heuristic policy, γ0 = 4, engine auto (what users get);
            with --engines, also each named runner (ours_eager, ours_static, ours_graph-body)
  hf        target.generate(assistant_model=draft), configured the way transformers
            reads it — on the DRAFT's generation_config: num_assistant_tokens = 4,
            num_assistant_tokens_schedule = "heuristic", assistant_confidence_threshold = 0
            (reset before every call: "heuristic" writes its count back)
  plain     target.generate(do_sample=False)

Both speculative methods must produce exactly the plain greedy tokens; the
script checks that before it reports a number.

Wall-clock and CPU time (`time.process_time`, one torch thread) are both
reported: on a shared machine the CPU time is the steadier of the two.

Pair: the embedded demo pair when it is installed, else a synthetic pair
(a random Llama target whose upper layers add little, and a draft made of
its first layers, so the draft is cheaper and agrees often; --synthetic forces it).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/engine_vs_hf.py [--prompts 8] [--repeats 3] [--max-new-tokens 128]
        [--engines eager,static,graph-body] [--no-direct]

The goal it checks (issue 10): ours with engine auto ≥ 1.2× transformers' assisted generation.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import transformers  # noqa: E402

from gammatune_tui.engine import (  # noqa: E402
    PolicySettings, SamplingConfig, SessionSummary, SpeculativeDecoder, StepEvent,
)
from gammatune_tui.engine.loading.models import ModelPair, load_pair  # noqa: E402
from gammatune_tui.engine.runners import runner_pool  # noqa: E402
from gammatune_tui.prompts import load_prompt_set  # noqa: E402
from gammatune_tui.resources import demo_pair_installed  # noqa: E402


def synthetic_pair(seed: int = 0, damp: float = 0.1) -> ModelPair:
    """A target (8 layers, d=256) whose layers 3..8 are damped, and a draft = its first 2 layers."""
    import copy

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {"<s>": 0, "</s>": 1, "<unk>": 2, **{ch: i + 3 for i, ch in enumerate(alphabet)}}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=256, intermediate_size=688, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048,
                      bos_token_id=0, eos_token_id=1, tie_word_embeddings=False, initializer_range=0.1)
    torch.manual_seed(seed)
    target = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for layer in target.model.layers[2:]:
            layer.self_attn.o_proj.weight.mul_(damp)
            layer.mlp.down_proj.weight.mul_(damp)
    dcfg = copy.deepcopy(cfg)
    dcfg.num_hidden_layers = 2
    draft = LlamaForCausalLM(dcfg).eval()
    sd = {k: v for k, v in target.state_dict().items() if not k.startswith("model.layers.") or int(k.split(".")[2]) < 2}
    draft.load_state_dict(sd)
    for m in (target, draft):
        m.generation_config.eos_token_id = 1
        m.generation_config.pad_token_id = 1
    return ModelPair(target=target, draft=draft, tokenizer=tok, device=torch.device("cpu"), dtype=torch.float32,
                     name_target="synthetic-8L-d256", name_draft="synthetic-2L-d256 (target's first layers)")


def run_ours(pair, ids, n, stats=True):
    dec = SpeculativeDecoder(pair, PolicySettings.build("hf-heuristic", 4), SamplingConfig())
    t0, c0 = time.perf_counter(), time.process_time()
    out = []
    for ev in dec.generate(ids, max_new_tokens=n):
        if isinstance(ev, StepEvent):
            out.extend(t.id for t in ev.emitted)
        elif isinstance(ev, SessionSummary) and stats:
            OURS_STATS["steps"] += ev.steps
            OURS_STATS["drafted"] += ev.drafted
            OURS_STATS["accepted"] += ev.accepted
            OURS_STATS["tokens"] += ev.tokens
    return out, time.perf_counter() - t0, time.process_time() - c0


OURS_STATS = {"steps": 0, "drafted": 0, "accepted": 0, "tokens": 0}


def run_hf(pair, ids, n, assisted: bool):
    x = torch.tensor([ids], device=pair.device)
    kw = dict(attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n,
              eos_token_id=sorted(pair.eos_ids), pad_token_id=sorted(pair.eos_ids)[0])
    if assisted:
        gc = pair.draft.generation_config
        gc.num_assistant_tokens = 4
        gc.num_assistant_tokens_schedule = "heuristic"
        gc.assistant_confidence_threshold = 0.0
        kw["assistant_model"] = pair.draft
    t0, c0 = time.perf_counter(), time.process_time()
    with torch.no_grad():
        out = pair.target.generate(x, **kw)
    return out[0, len(ids):].tolist(), time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--synthetic", action="store_true", help="use the synthetic pair even if the demo pair exists")
    ap.add_argument("--engines", default="", help="also time ours under these runners (comma-separated: "
                    "eager, static, graph-body)")
    ap.add_argument("--no-direct", action="store_true", help="the eager runner uses transformers' own forward, "
                    "not fast_forward's direct path (issue 25: does the direct path earn its place?)")
    ap.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = ap.parse_args()
    if args.no_direct:
        from gammatune_tui.engine.runners import fast_forward

        fast_forward._direct_eligible = lambda model: False  # make_forward's check only; the runners' choice is unchanged
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]

    torch.set_num_threads(args.threads)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    if demo_pair_installed() and not args.synthetic:
        pair = load_pair(demo=True, device="cpu", dtype="float32", threads=args.threads)
        which = "embedded demo pair"
    else:
        pair = synthetic_pair()
        which = "synthetic pair (demo pair not installed)" if not args.synthetic else "synthetic pair"
    prompts = [p.text for p in load_prompt_set("code")[: args.prompts]]
    encoded = [pair.encode_prompt(p, raw=True) for p in prompts]
    n = args.max_new_tokens

    pair = dataclasses.replace(pair, engine="auto")
    methods = {
        "ours": lambda ids: run_ours(pair, ids, n),
        "hf_assisted": lambda ids: run_hf(pair, ids, n, True),
        "plain": lambda ids: run_hf(pair, ids, n, False),
    }
    for e in engines:
        variant = dataclasses.replace(pair, engine=e)
        methods[f"ours_{e}"] = lambda ids, v=variant: run_ours(v, ids, n, stats=False)
    # warm-up (allocators, lazy imports, first-call paths)
    for fn in methods.values():
        fn(encoded[0])
    OURS_STATS.update(steps=0, drafted=0, accepted=0, tokens=0)

    tokens = {m: 0 for m in methods}
    seconds = {m: 0.0 for m in methods}
    cpu = {m: 0.0 for m in methods}
    per_prompt_ratio = []
    for ids in encoded:
        t_prompt = {m: 0.0 for m in methods}
        for _ in range(args.repeats):
            outs = {}
            for m, fn in methods.items():  # interleaved, so load drifts hit all methods alike
                out, dt, ct = fn(ids)
                outs[m] = out
                tokens[m] += len(out)
                seconds[m] += dt
                cpu[m] += ct
                t_prompt[m] += dt
            if any(out != outs["plain"] for out in outs.values()):
                raise SystemExit("outputs differ from plain greedy decoding: not a fair comparison")
        per_prompt_ratio.append(t_prompt["hf_assisted"] / t_prompt["ours"])

    tps = {m: tokens[m] / seconds[m] for m in methods}
    tpc = {m: tokens[m] / cpu[m] for m in methods}
    result = {
        "pair": which, "target": pair.name_target, "draft": pair.name_draft,
        "target_params": sum(p.numel() for p in pair.target.parameters()),
        "draft_params": sum(p.numel() for p in pair.draft.parameters()),
        "prompts": len(encoded), "repeats": args.repeats, "max_new_tokens": n, "threads": args.threads,
        "auto_runner": runner_pool(pair).label, "load_average": os.getloadavg(), "eager_direct_path": not args.no_direct,
        "ours_acceptance_rate": OURS_STATS["accepted"] / max(1, OURS_STATS["drafted"]),
        "ours_tokens_per_step": OURS_STATS["tokens"] / max(1, OURS_STATS["steps"]),
        "tokens_per_s": tps,
        "tokens_per_cpu_s": tpc,
        "cpu_ours_over_hf_assisted": tpc["ours"] / tpc["hf_assisted"],
        "cpu_ours_over_plain": tpc["ours"] / tpc["plain"],
        "ours_over_hf_assisted": tps["ours"] / tps["hf_assisted"],
        "ours_over_plain": tps["ours"] / tps["plain"],
        "hf_assisted_over_plain": tps["hf_assisted"] / tps["plain"],
        "per_prompt_ours_over_hf": {"min": min(per_prompt_ratio), "median": statistics.median(per_prompt_ratio),
                                    "max": max(per_prompt_ratio)},
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
    print(json.dumps(result, indent=2))
    print()
    print("| method | tokens/s (wall) | vs HF assisted | vs plain | tokens/CPU-s | vs HF assisted | vs plain |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rows = [("ours", f"gammatune SpeculativeDecoder (hf-heuristic, γ0=4), engine auto = {runner_pool(pair).label}")]
    eager_forward = "transformers' forward" if args.no_direct else "direct forward"
    rows += [(f"ours_{e}", f"gammatune SpeculativeDecoder, engine {e}" + (f" ({eager_forward})" if e == "eager" else ""))
             for e in engines]
    rows += [("hf_assisted", "transformers assisted generation (heuristic, 4)"), ("plain", "plain target greedy")]
    for m, label in rows:
        print(f"| {label} | {tps[m]:.1f} | {tps[m] / tps['hf_assisted']:.2f}× | {tps[m] / tps['plain']:.2f}× "
              f"| {tpc[m]:.1f} | {tpc[m] / tpc['hf_assisted']:.2f}× | {tpc[m] / tpc['plain']:.2f}× |")
    goal = tpc["ours"] / tpc["hf_assisted"]
    print(f"\ngoal: auto ≥ 1.2× transformers' assisted generation (CPU time): {goal:.2f}× "
          f"{'met' if goal >= 1.2 else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
