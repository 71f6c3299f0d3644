"""The GPU engine's benchmark (issues 10, 18): the step by capacity and window, bandwidth, and speculation.

One process, nothing downloaded: random-weight models of real shapes in bf16 —
a Llama-3.1-8B-shaped target, a draft made of the target's first layers (the
target's upper layers are damped until greedy acceptance sits in 0.6–0.8; the
draft shares the target's modules, so it costs no memory), and the
Llama-3.2-1B shape for the draft-step latency. It measures the device's copy
bandwidth once, then prints:

  1. the target's step for capacity 256 / 1024 / 4096 × windows 1 / 5 / 17, with the
     cache filled to the capacity (the worst a session at that capacity sees): ms per
     step, % of copy bandwidth, the attention path / SDPA backend in use, compiled or not
     (graphs runner; `graph-body` — its step uncaptured — without CUDA), next to
     transformers' own forward over a DynamicCache of the same length;
  2. the 1B shape's 1-token step per runner (the draft step);
  3. tokens/s of gammatune's decoder (each runner) against transformers' assisted
     generation (same policy and γ0), transformers' plain and static-cache compiled
     decoding, and our own plain decoding through the graphs runner, with each output
     compared to transformers' plain greedy tokens; and the first session's speed
     (after load_pair's warm-up) against the steady state;
  4. the issue's goals, met or not, with the device named.

    python benchmarks/gpu_engine.py                  # CUDA, real shapes, bf16
    python benchmarks/gpu_engine.py --cpu-proxy      # tiny shapes on the CPU, float32: the pipeline end to end

Random weights decide nothing about speed; acceptance is what the damping
makes it and is printed beside every speculative number.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import transformers  # noqa: E402

from gammatune_tui.bench.live import latency as lat  # noqa: E402
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent  # noqa: E402
from gammatune_tui.engine import drafting  # noqa: E402
from gammatune_tui.engine.common.devices import resolve_device  # noqa: E402
from gammatune_tui.engine.loading.models import ModelPair  # noqa: E402
from gammatune_tui.engine.loading.warmup import warm_up  # noqa: E402
from gammatune_tui.errors import EngineUnavailable  # noqa: E402
from gpu_steps import decode_ms, sdpa_backend, step_ms, sync  # noqa: E402

SMALL_TARGET = {**lat.SHAPES["Llama-3.1-8B"], "hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 8,
                "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 4096}
SMALL_LATENCY = {**lat.SHAPES["Llama-3.2-1B"], "hidden_size": 128, "intermediate_size": 344, "num_hidden_layers": 4,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 4096}
PROXY_TARGET = {**SMALL_TARGET, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
                "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512}
PROXY_LATENCY = {**SMALL_LATENCY, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                 "vocab_size": 512}
RUNNERS = ("eager", "static", "graphs")


def word_tokenizer(vocab: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel(vocab={f"t{i} ": i for i in range(vocab)}, unk_token="t0 "))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="t0 ")


def make_pair(shape: dict, device: torch.device, dtype: str, draft_layers: int, init: float) -> ModelPair:
    """A target of `shape` and a draft that is its first `draft_layers` layers (shared modules)."""
    from transformers import LlamaForCausalLM

    target = lat.build_model({**shape, "initializer_range": init}, str(device), dtype)
    dcfg = type(target.config).from_dict({**target.config.to_dict(), "num_hidden_layers": draft_layers})
    with torch.device("meta"):
        draft = LlamaForCausalLM(dcfg)
    inner = target.model
    draft.model.embed_tokens, draft.model.norm, draft.model.rotary_emb = inner.embed_tokens, inner.norm, inner.rotary_emb
    draft.model.layers = torch.nn.ModuleList(inner.layers[:draft_layers])
    draft.lm_head = target.lm_head
    draft.eval()
    assert not any(t.is_meta for t in (*draft.parameters(), *draft.buffers())), "draft left on the meta device"
    for m in (target, draft):
        m.generation_config.eos_token_id = None
        m.generation_config.pad_token_id = 0
    return ModelPair(target=target, draft=draft, tokenizer=word_tokenizer(int(shape["vocab_size"])), device=device,
                     dtype=getattr(torch, dtype), name_target="random Llama-3.1-8B shape",
                     name_draft=f"its first {draft_layers} layers")


def scale_upper_layers(target, start: int, factor: float) -> None:
    with torch.no_grad():
        for layer in target.model.layers[start:]:
            layer.self_attn.o_proj.weight.mul_(factor)
            layer.mlp.down_proj.weight.mul_(factor)


READS = {"reads": 0, "steps": 0}  # device→host reads of our decoder and its steps (issue 18, m2)


def _counted(t):
    READS["reads"] += 1
    return _host_read(t)


_host_read = drafting.host_read
drafting.host_read = _counted


def ours(pair: ModelPair, prompt: list[int], n: int, method: str, gamma0: int):
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0), SamplingConfig())
    out: list[int] = []
    t0 = time.perf_counter()
    for ev in dec.generate(prompt, max_new_tokens=n):
        if isinstance(ev, StepEvent):
            out.extend(t.id for t in ev.emitted)
    summary = ev
    READS["steps"] += summary.steps
    return out, time.perf_counter() - t0, summary


def calibrate(pair: ModelPair, prompts: list[list[int]], draft_layers: int, damp: float | None) -> tuple[float, float]:
    """Damp the target's upper layers until greedy acceptance is in 0.6–0.8 (or by `damp`); (factor, acceptance)."""
    eager = dataclasses.replace(pair, engine="eager")

    def acceptance() -> float:
        acc = dra = 0
        for p in prompts[:2]:
            s = ours(eager, p, 48, "specdecode", 4)[2]
            acc, dra = acc + s.accepted, dra + s.drafted
        return acc / max(1, dra)

    if damp is not None:
        scale_upper_layers(pair.target, draft_layers, damp)
        return damp, acceptance()
    factor, alpha = 1.0, acceptance()
    too_low = too_high = None  # the factors seen with acceptance below 0.6 / above 0.8
    for _ in range(10):  # more damping (a smaller factor) makes the target more like the draft
        if 0.6 <= alpha <= 0.8:
            break
        if alpha < 0.6:
            too_low = factor
        else:
            too_high = factor
        new = factor / 4 if too_high is None else factor * 2 if too_low is None else (too_low * too_high) ** 0.5
        scale_upper_layers(pair.target, draft_layers, new / factor)
        factor, alpha = new, acceptance()
    return factor, alpha


def hf_generate(pair: ModelPair, prompt: list[int], n: int, kind: str, gamma0: int):
    x = torch.tensor([prompt], device=pair.device)
    kw = dict(attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n, pad_token_id=0)
    if kind == "assisted":
        gc = pair.draft.generation_config
        gc.num_assistant_tokens, gc.num_assistant_tokens_schedule = gamma0, "heuristic"
        gc.assistant_confidence_threshold = 0.0
        kw["assistant_model"] = pair.draft
    elif kind == "static-compiled":
        from transformers import CompileConfig

        cc = CompileConfig(fullgraph=True, mode="reduce-overhead" if pair.device.type == "cuda" else "default")
        cc._compile_all_devices = pair.device.type != "cuda"  # transformers compiles only on accelerators by default
        kw.update(cache_implementation="static", compile_config=cc)
    sync(pair.device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = pair.target.generate(x, **kw)
    sync(pair.device)
    return out[0, len(prompt):].tolist(), time.perf_counter() - t0


def generation_rows(args, pair: ModelPair, prompts, runners, alpha: float, res: dict) -> None:
    n = args.tokens
    print(f"\n## 3. generation, {len(prompts)} prompts × {n} tokens, greedy, {args.method} γ0={args.gamma0}"
          f" (acceptance ≈ {alpha:.2f})\n")
    ref = [hf_generate(pair, p, n, "plain", args.gamma0)[0] for p in prompts]
    variants = {r: dataclasses.replace(pair, engine=r) for r in runners}
    plain_runner = runners[-1]  # graphs (graph-body without CUDA)
    methods = {f"ours ({r})": (lambda p, v=variants[r]: ours(v, p, n, args.method, args.gamma0)[:2]) for r in runners}
    methods[f"ours plain ({plain_runner})"] = lambda p: _plain(variants[plain_runner], p, n)
    methods["transformers assisted"] = lambda p: hf_generate(pair, p, n, "assisted", args.gamma0)
    methods["transformers plain"] = lambda p: hf_generate(pair, p, n, "plain", args.gamma0)
    if not args.no_compile:
        methods["transformers static cache, compiled"] = lambda p: hf_generate(pair, p, n, "static-compiled", 0)
    res["generation"] = {}
    print("| method | tokens/s | output | first session | host reads / step |\n|---|---:|---|---|---:|")
    for label, fn in methods.items():
        try:
            first_tps = warm_s = None
            if label.startswith("ours ("):
                variant = variants[label[6:-1]]
                warm_s = warm_up(variant)  # what load_pair does: untimed, graphs compiled and captured
                first_tps = n / fn(prompts[0])[1]  # the first session after warm-up, timed
            else:
                fn(prompts[0])  # warm-up (and compilation) call, untimed
            READS.update(reads=0, steps=0)
            runs = [fn(p) for p in prompts]
            per_step = READS["reads"] / READS["steps"] if READS["steps"] else None
        except (EngineUnavailable, RuntimeError) as exc:  # e.g. no C++ compiler for torch.compile on a CPU
            print(f"| {label} | failed: {str(exc).splitlines()[0][:120]} | | | |")
            continue
        tps = n * len(runs) / sum(t for _, t in runs)
        same = sum(out == want for (out, _), want in zip(runs, ref))
        res["generation"][label] = {"tokens_per_s": tps, "identical_to_plain": same, "first_tokens_per_s": first_tps,
                                    "warmup_s": warm_s, "host_reads_per_step": per_step}
        first = f"{first_tps:,.1f} tok/s after a {warm_s:.1f} s warm-up" if warm_s is not None else ""
        reads = f"{per_step:.2f}" if per_step is not None else ""
        print(f"| {label} | {tps:,.1f} | = transformers plain greedy on {same}/{len(runs)} prompts | {first} | {reads} |")


def _plain(pair: ModelPair, prompt: list[int], n: int):
    from gammatune_tui.engine.plain import plain_decode

    run = plain_decode(pair, prompt, n)
    return run.token_ids, run.wall_s


def main() -> None:  # noqa: C901 - one linear script
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--small", action="store_true", help="small shapes (for a CPU run of the whole pipeline)")
    ap.add_argument("--cpu-proxy", action="store_true",
                    help="tiny shapes on the CPU in float32, few repeats: the whole script in seconds (CI)")
    ap.add_argument("--capacities", default="256,1024,4096")
    ap.add_argument("--windows", default="1,5,17")
    ap.add_argument("--prompts", type=int, default=3)
    ap.add_argument("--prompt-len", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=128, help="new tokens per generation")
    ap.add_argument("--method", default="hf-heuristic")
    ap.add_argument("--gamma0", type=int, default=4)
    ap.add_argument("--draft-layers", type=int, default=2)
    ap.add_argument("--init", type=float, default=0.05, help="initializer_range of the random weights")
    ap.add_argument("--damp", type=float, help="scale of the target's upper layers (default: calibrated)")
    ap.add_argument("--no-compile", action="store_true",
                    help="skip transformers' static-cache compiled decoding and our compiled step rows")
    ap.add_argument("--json", type=Path, help="also write every number here")
    args = ap.parse_args()
    if args.cpu_proxy:
        args.device, args.dtype, args.no_compile = "cpu", "float32", True
        args.prompts, args.tokens, args.draft_layers = min(args.prompts, 1), min(args.tokens, 24), 1
        torch.set_num_threads(1)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    device = resolve_device(args.device)
    cuda = device.type == "cuda"
    name = torch.cuda.get_device_name(device) if cuda else f"{platform.machine()} CPU, {os.cpu_count()} cores"
    res: dict = {"device": name, "dtype": args.dtype, "small": args.small, "cpu_proxy": args.cpu_proxy,
                 "load_average": os.getloadavg(),
                 "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    print(f"# gammatune GPU-engine benchmark on {name} ({args.dtype}; torch {torch.__version__}, "
          f"transformers {transformers.__version__}; load average {os.getloadavg()[0]:.2f})\n")
    # without CUDA the graphs runner's step runs uncaptured ("graph-body"): the same code, no graph
    runners = [r if cuda or r != "graphs" else "graph-body" for r in RUNNERS]
    if not cuda:
        print("graphs: not measured (CUDA graphs need a CUDA device); graph-body = its step run uncaptured\n")

    bw = lat.copy_bandwidth(str(device), mib=1024 if cuda else (32 if args.cpu_proxy else 256))
    res["copy_gbs"] = bw
    print(f"copy bandwidth: {bw:,.0f} GB/s (read + write)\n")

    shape = PROXY_TARGET if args.cpu_proxy else SMALL_TARGET if args.small else lat.SHAPES["Llama-3.1-8B"]
    pair = make_pair(shape, device, args.dtype, args.draft_layers, args.init)
    vocab = int(shape["vocab_size"])
    g = torch.Generator().manual_seed(0)
    prompts = [torch.randint(0, vocab, (args.prompt_len,), generator=g).tolist() for _ in range(args.prompts)]
    damp, alpha = calibrate(pair, prompts, args.draft_layers, args.damp)
    res.update(damp=damp, calibrated_acceptance=alpha)
    print(f"target: {shape['num_hidden_layers']} layers, hidden {shape['hidden_size']}; draft: its first "
          f"{args.draft_layers} layers; upper layers scaled by {damp:.4f} → greedy acceptance {alpha:.2f}\n")

    caps = [int(c) for c in args.capacities.split(",")]
    windows = [int(w) for w in args.windows.split(",")]
    ids = torch.randint(0, vocab, (1, max(caps) + 1), generator=g).to(device)
    step_runner = runners[-1]
    compiled_rows = [False] + ([True] if cuda and not args.no_compile else [])
    print("## 1. the target's step, cache filled to the capacity\n")
    print("| capacity | window | runner | compiled | attention | SDPA backend | ms/step | GB/s | % of copy bandwidth |"
          "\n|---:|---:|---|---|---|---|---:|---:|---:|")
    res["step"] = []
    repeats = 20 if cuda else 3
    for cap in caps:
        nbytes = lat.step_bytes(pair.target, cap)
        for q in windows:
            backend = sdpa_backend(pair.target, device, cap, q)
            for r, comp in [("transformers", False)] + [(step_runner, c) for c in compiled_rows]:
                ms, path = step_ms(pair.target, r, ids, cap, q, repeats, comp)
                gbs = nbytes / ms * 1e3 / 1e9
                row = {"capacity": cap, "window": q, "runner": r, "compiled": comp, "attention": path,
                       "sdpa_backend": backend if path == "sdpa" else "—", "ms": ms, "gbs": gbs, "pct": 100 * gbs / bw}
                res["step"].append(row)
                print(f"| {cap} | {q} | {r} | {'yes' if comp else 'no'} | {path} | {row['sdpa_backend']} | {ms:.2f} | "
                      f"{gbs:,.0f} | {row['pct']:.0f} % |")
    os.environ.pop("GAMMATUNE_COMPILE", None)
    dump(args, res)

    lshape = PROXY_LATENCY if args.cpu_proxy else SMALL_LATENCY if args.small else lat.SHAPES["Llama-3.2-1B"]
    small_model = lat.build_model(lshape, str(device), args.dtype)
    lbytes = lat.step_bytes(small_model, args.prompt_len)
    lids = torch.randint(0, int(lshape["vocab_size"]), (1, args.prompt_len + 40), generator=g).to(device)
    print(f"\n## 2. the draft step: Llama-3.2-1B shape{' (small)' if args.small or args.cpu_proxy else ''}, 1 token\n")
    print("| runner | ms | % of copy bandwidth |\n|---|---:|---:|")
    res["draft_step"] = {}
    for r in ("transformers", *runners):
        ms = decode_ms(small_model, r, lids, args.prompt_len, 32 if cuda else 8)
        res["draft_step"][r] = {"ms": ms, "pct": 100 * lbytes / ms * 1e3 / 1e9 / bw}
        print(f"| {r} | {ms:.2f} | {res['draft_step'][r]['pct']:.0f} % |")
    del small_model
    dump(args, res)

    generation_rows(args, pair, prompts, runners, alpha, res)
    dump(args, res)
    goals(args, res, name, alpha)


def dump(args, res: dict) -> None:
    """Write what is measured so far: a run cut short by a lease's limit keeps its finished sections."""
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))


def goals(args, res: dict, name: str, alpha: float) -> None:
    if args.dtype not in ("float32", "fp32"):
        print(f"\n(in {args.dtype} a window of several tokens and a single token round differently, so greedy text may "
              "part from transformers' after a near-tie; exactness is checked in float32 and by the argmax invariant)")
    gen = res["generation"]
    print(f"\n## 4. goals (issue 18) on {name}\n")

    def goal(text: str, value: float | None, ok: bool | None) -> None:
        verdict = "not measured (needs CUDA)" if value is None else ("met" if ok else "NOT met")
        print(f"- {text}: {'' if value is None else f'{value:.2f} → '}{verdict}")

    graphs = [r for r in res["step"] if r["runner"] == "graphs" and r["capacity"] == 4096 and r["window"] == 1]
    g_dec = max((r["pct"] for r in graphs), default=None)
    goal("8B-shape step with graphs at capacity 4096 ≥ 70 % of copy bandwidth (%)", g_dec,
         g_dec is not None and g_dec >= 70)
    g_step = res["draft_step"].get("graphs", {}).get("ms")
    goal("1B-shape draft step with graphs ≤ 1.5 ms", g_step, g_step is not None and g_step <= 1.5)
    ours_g = gen.get("ours (graphs)", {}).get("tokens_per_s")
    hf_a = gen.get("transformers assisted", {}).get("tokens_per_s")
    x_hf = ours_g / hf_a if ours_g and hf_a else None
    goal("speculation with graphs ≥ 3× transformers' assisted generation (×)", x_hf, x_hf is not None and x_hf >= 3)
    plain = gen.get("ours plain (graphs)", {}).get("tokens_per_s")
    x_plain = ours_g / plain if ours_g and plain else None
    goal(f"speculation with graphs ≥ 1.5× our compiled plain decoding at acceptance {alpha:.2f} (×)", x_plain,
         x_plain is not None and x_plain >= 1.5)
    first = gen.get("ours (graphs)", {})
    ratio = first["first_tokens_per_s"] / first["tokens_per_s"] if first else None
    goal("first session after warm-up within 10 % of steady state (first / steady)", ratio,
         ratio is not None and ratio >= 0.9)


if __name__ == "__main__":
    main()
