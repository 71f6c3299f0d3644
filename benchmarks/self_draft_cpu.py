"""Does a self-draft pay on a CPU? SmolLM2-135M against its own int4/int8 copies and prompt lookup.

The target runs in float32, or in `--dtype bfloat16` (both models; a greedy near-tie is then said apart).

Issue 26's goals, measured: on the shipped specbench prompts (first turns,
chat template, `--tokens` new tokens each), target-only decoding against
`self:int4`, `self:int8` and prompt lookup, greedy (T 0) and sampled (T 0.7,
top-p 1), one torch thread. Every configuration runs on every prompt before
the next prompt starts, so load drifts on a shared machine hit all alike;
each one's speed is its total tokens over its total time, and its speed-up
is the median over prompts of (its tok/s / target-only tok/s on that prompt).

Also reported: the self-drafts' build time and the bytes they add to the
target's (goals < 3 s and ≤ 0.35×), the one-token step of target and drafts
(median), c = T_target / T_draft, greedy α, and per step the time spent
drafting, verifying and in bookkeeping (the rest of the step), so a missed
goal shows where the time went. Greedy outputs are checked against
target-only decoding (lossless) on every prompt.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/self_draft_cpu.py [--prompts 12] [--tokens 128]
        [--configs plain,int4:specdecode:3,...] [--json out.json]

A config is `plain`, `lookup[:METHOD:γ0]`, or `int4|int8|bf16:METHOD:γ0`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent, with_draft  # noqa: E402
from gammatune_tui.engine.events import SessionSummary  # noqa: E402
from gammatune_tui.engine.loading.models import load_pair  # noqa: E402
from gammatune_tui.session.lossless import first_difference, judge  # noqa: E402
from gammatune_tui.engine.plain import plain_decode  # noqa: E402
from gammatune_tui.engine.common.model_weights import model_bytes  # noqa: E402
from gammatune_tui.engine.runners import runner_pool  # noqa: E402
from gammatune_tui.prompts import load_prompt_set  # noqa: E402
from gammatune_tui.engine.runners import build_runner  # noqa: E402

DEFAULT_CONFIGS = ("plain,int4:specdecode:3,int4:specdecode:5,int4:gammatune+:4,int4:adaptive-k:4,"
                   "int8:specdecode:3,lookup:gammatune+:4")


def step_ms(model, ids, n=21, q=1) -> float:
    """Median ms of a q-token step of the static runner (what the decoder runs) after a prefill of `ids`."""
    r = build_runner("static", model)
    ctx = ids.shape[1]
    with r.mode():
        r.start(ctx + 8)
        r.prefill(ids)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            r.forward(ids[:, ctx - q:ctx], q)
            times.append(time.perf_counter() - t0)
            r.rewind(ctx)
    return statistics.median(times) * 1000


def agreement(target, draft, ids, answer) -> float:
    """Greedy argmax agreement of draft with target, teacher-forced over the target's own answer."""
    full = torch.tensor([ids + answer])
    with torch.inference_mode():
        t = target(full).logits[0, len(ids) - 1:-1].argmax(-1)
        d = draft(full).logits[0, len(ids) - 1:-1].argmax(-1)
    return float((t == d).float().mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=0, help="how many specbench prompts (0: all 34), spread over the set")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--temperatures", default="0,0.7")
    ap.add_argument("--configs", default=DEFAULT_CONFIGS)
    ap.add_argument("--json")
    ap.add_argument("--dtype", default="float32", help="both models' precision (bfloat16: a near-tie is said apart "
                    "from a fault, docs/precision.md)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, 1 thread; "
          f"load average at start {os.getloadavg()[0]:.2f}", flush=True)

    base = load_pair(pair="smollm2", drafter="prompt-lookup", device="cpu", dtype=args.dtype, threads=1)
    margins: dict = {}
    pairs = {"plain": base, "lookup": base}
    build = {}
    for kind in ("int4", "int8", "bf16"):
        if any(c.startswith(kind) for c in args.configs.split(",")):
            t0 = time.perf_counter()
            pairs[kind] = with_draft(base, f"self:{kind}")
            build[kind] = {"build_s": pairs[kind].self_draft.build_s, "with_warmup_s": time.perf_counter() - t0,
                           "extra_bytes": model_bytes(pairs[kind].draft, base.target),
                           "runner": runner_pool(pairs[kind]).label}
    target_bytes = model_bytes(base.target)
    prompts = load_prompt_set("specbench")
    if args.prompts and args.prompts < len(prompts):
        step = len(prompts) / args.prompts
        prompts = [prompts[int(i * step)] for i in range(args.prompts)]
    encoded = [(p.id, base.encode_prompt(p.turns[0])) for p in prompts]

    # one-token steps, c and α (teacher-forced over the target's greedy answer to the first prompts)
    ids0 = torch.tensor([encoded[0][1]])
    steps = {"target": step_ms(base.target, ids0)}
    for kind in build:
        steps[kind] = step_ms(pairs[kind].draft, ids0)
    steps["target_verify5"] = step_ms(base.target, ids0, q=5)
    steps["target_again"] = step_ms(base.target, ids0)   # the load may have moved: both ends of the window
    t_ms = (steps["target"] + steps["target_again"]) / 2

    configs = args.configs.split(",")
    temps = [float(t) for t in args.temperatures.split(",")]
    results: dict = {}
    answers: dict = {}
    for ti, temp in enumerate(temps):
        for pi, (pid, ids) in enumerate(encoded):
            for cfg in configs:
                key = (temp, cfg)
                res = results.setdefault(key, {"tokens": 0, "wall": 0.0, "per_prompt": [], "draft_s": 0.0,
                                               "verify_s": 0.0, "step_s": 0.0, "steps": 0, "drafted": 0, "emitted": 0,
                                               "accepted": 0, "exact": True})
                sampling = SamplingConfig(temperature=temp, seed=pi)
                if cfg == "plain":
                    run = plain_decode(base, ids, args.tokens, sampling)
                    toks, wall = run.tokens, run.wall_s
                    if temp == 0:
                        answers[pid], margins[pid] = run.token_ids, run.margins
                else:
                    kind, method, g0 = (cfg.split(":") + ["gammatune+", "4"])[:3]
                    dec = SpeculativeDecoder(pairs[kind], PolicySettings.build(method, int(g0)), sampling,
                                             drafter="prompt-lookup" if kind == "lookup" else None)
                    out = []
                    summ = None
                    for ev in dec.generate(ids, max_new_tokens=args.tokens):
                        if isinstance(ev, StepEvent):
                            out.extend(t.id for t in ev.emitted)
                            res["draft_s"] += ev.draft_s
                            res["verify_s"] += ev.verify_s
                            res["step_s"] += ev.step_s
                            res["steps"] += 1
                            res["drafted"] += len(ev.drafted)
                            res["accepted"] += ev.accepted
                            res["emitted"] += len(ev.emitted)
                        elif isinstance(ev, SessionSummary):
                            summ = ev
                    toks, wall = summ.tokens, summ.wall_s
                    if temp == 0 and answers.get(pid) is not None and out != answers[pid]:
                        pos = first_difference(answers[pid], out, False)
                        verdict = judge(pos if pos is not None else 0, cfg, "plain", args.dtype, margins[pid])
                        if verdict.near_tie:
                            res["near_ties"] = res.get("near_ties", 0) + 1
                        else:
                            res["exact"] = False
                res["tokens"] += toks
                res["wall"] += wall
                res["per_prompt"].append(toks / wall if wall > 0 else 0.0)
            print(f"T {temp} prompt {pi + 1}/{len(encoded)} done; load {os.getloadavg()[0]:.2f}", file=sys.stderr,
                  flush=True)

    alpha = {}
    for kind in build:
        alpha[kind] = statistics.mean(agreement(base.target, pairs[kind].draft, ids, answers[pid])
                                      for pid, ids in encoded[:4] if answers.get(pid))

    print(f"\nSmolLM2-135M-Instruct {args.dtype} target ({target_bytes / 1e6:.0f} MB), {len(encoded)} specbench prompts × "
          f"{args.tokens} tokens; load average at end {os.getloadavg()[0]:.2f}")
    print(f"static runner, median of 21: target one-token step {steps['target']:.1f} / {steps['target_again']:.1f} ms "
          f"(before / after the drafts'), 5-token verify {steps['target_verify5']:.1f} ms")
    print("\n| draft | build s | adds | × target bytes | step ms | c | greedy α |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, b in build.items():
        print(f"| self:{kind} | {b['build_s']:.2f} | {b['extra_bytes'] / 1e6:.0f} MB | "
              f"{b['extra_bytes'] / target_bytes:.2f} | {steps[kind]:.1f} | {t_ms / steps[kind]:.2f} | {alpha[kind]:.3f} |")
    print("\n| T | config | tok/s (total) | speed-up (median over prompts) | α | tok/step | draft ms/step "
          "| verify ms/step | other ms/step | greedy exact |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    rows = []
    for temp in temps:
        plain = results[(temp, "plain")]["per_prompt"]
        for cfg in configs:
            r = results[(temp, cfg)]
            ups = [a / b for a, b in zip(r["per_prompt"], plain) if b > 0]
            n = max(r["steps"], 1)
            row = {"temperature": temp, "config": cfg, "tok_s": r["tokens"] / r["wall"],
                   "speedup_median": statistics.median(ups), "speedup_min": min(ups), "speedup_max": max(ups),
                   "alpha": r["accepted"] / r["drafted"] if r["drafted"] else None,
                   "tokens_per_step": r["emitted"] / n if r["steps"] else 1.0,
                   "draft_ms": 1000 * r["draft_s"] / n, "verify_ms": 1000 * r["verify_s"] / n,
                   "other_ms": 1000 * (r["step_s"] - r["draft_s"] - r["verify_s"]) / n, "exact": r["exact"]}
            rows.append(row)
            a = f"{row['alpha']:.2f}" if row["alpha"] is not None else "–"
            st = "–" if cfg == "plain" else f"{row['draft_ms']:.1f} | {row['verify_ms']:.1f} | {row['other_ms']:.1f}"
            if cfg == "plain":
                st = "– | – | –"
            print(f"| {temp} | {cfg} | {row['tok_s']:.1f} | {row['speedup_median']:.2f}× "
                  f"({row['speedup_min']:.2f}–{row['speedup_max']:.2f}) | {a} | {row['tokens_per_step']:.2f} | {st} | "
                  f"{'yes' if r['exact'] or temp > 0 else 'NO'}"
                  f"{f' ({nt} near-ties)' if (nt := r.get('near_ties')) else ''} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"build": build, "steps_ms": steps, "alpha": alpha, "rows": rows,
                                               "prompts": [pid for pid, _ in encoded], "tokens": args.tokens},
                                              indent=1))


if __name__ == "__main__":
    main()
