"""GammaTune inside `generate` (gammatune_tui.hf): as fast as the engine, faster than assisted generation?

Same pair (the embedded demo pair), same prompts (the first N of
demo_prompts/code.jsonl), greedy, the same process, runs interleaved per
prompt (their order rotated each repeat):

  engine     SpeculativeDecoder on load_pair(demo=True): what `gammatune run` runs
             (gammatune+, γ0 4, the default parameters, engine auto)
  callable   target.generate(ids, custom_generate=gammatune_generate, draft_model=draft,
             gamma_method="gammatune+", gamma0=4) on models from from_pretrained
  assisted   target.generate(ids, assistant_model=draft), configured as transformers reads it
             (on the draft's generation_config: 4 assistant tokens, "heuristic", threshold 0;
             reset before each call, since "heuristic" writes its count back)
  plain      target.generate(ids, do_sample=False): the reference every row must equal

Each row's time is the wall clock (and CPU time, one torch thread) around
the whole call, prefill included. The goals (issue 28): callable within 5 %
of engine; callable ≥ 1.2× assisted. Ratios are medians over prompts of
per-prompt ratios (each prompt's rows ran back to back, so a load burst on the
shared machine hits them alike), beside the totals.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hf_generate.py [--prompts 8] [--repeats 3] [--max-new-tokens 128]
        [--repetition-penalty 1.2]

`--repetition-penalty` runs every row with it (the engine through its
SamplingConfig, the others through generate's `repetition_penalty`): what the
processors applied to both models, position by position, cost.
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent  # noqa: E402
from gammatune_tui.engine.loading.models import load_pair  # noqa: E402
from gammatune_tui.hf import demo_paths, gammatune_generate  # noqa: E402
from gammatune_tui.prompts import load_prompt_set  # noqa: E402

ROWS = ("engine", "callable", "assisted", "plain")


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--repetition-penalty", type=float, default=1.0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    n = args.max_new_tokens
    rp = args.repetition_penalty

    pair = load_pair(demo=True, device="cpu", dtype="float32", threads=1)
    t_dir, d_dir = demo_paths()
    tok = AutoTokenizer.from_pretrained(t_dir)
    # float32, as `gammatune run` loads on a CPU (the demo pair is stored in float16, which from_pretrained keeps)
    target = AutoModelForCausalLM.from_pretrained(t_dir, dtype=torch.float32).eval()
    draft = AutoModelForCausalLM.from_pretrained(d_dir, dtype=torch.float32).eval()
    settings = PolicySettings.build("gammatune+", 4)

    def engine(ids):
        out = []
        for ev in SpeculativeDecoder(pair, settings, SamplingConfig(repetition_penalty=rp)).generate(ids, n):
            if isinstance(ev, StepEvent):
                out += [t.id for t in ev.emitted]
        return out

    def callable_(ids):
        x = torch.tensor([ids])
        return target.generate(x, custom_generate=gammatune_generate, draft_model=draft, gamma_method="gammatune+",
                               gamma0=4, max_new_tokens=n, do_sample=False, repetition_penalty=rp)[0, len(ids):].tolist()

    def assisted(ids):
        gc = draft.generation_config
        gc.num_assistant_tokens, gc.num_assistant_tokens_schedule, gc.assistant_confidence_threshold = 4, "heuristic", 0.0
        x = torch.tensor([ids])
        return target.generate(x, assistant_model=draft, max_new_tokens=n, do_sample=False,
                               repetition_penalty=rp)[0, len(ids):].tolist()

    def plain(ids):
        x = torch.tensor([ids])
        return target.generate(x, max_new_tokens=n, do_sample=False, repetition_penalty=rp)[0, len(ids):].tolist()

    fns = {"engine": engine, "callable": callable_, "assisted": assisted, "plain": plain}
    prompts = [p.text for p in load_prompt_set("code")][: args.prompts]
    encoded = [list(tok(p).input_ids) for p in prompts]
    for fn in fns.values():   # warm-up: the pair cached on the target, the runners' buffers, first calls
        fn(encoded[0])

    wall = {r: [[0.0] * len(encoded) for _ in range(args.repeats)] for r in ROWS}
    cpu = {r: [[0.0] * len(encoded) for _ in range(args.repeats)] for r in ROWS}
    tokens = [0] * len(encoded)
    loads = []
    for rep in range(args.repeats):
        for i, ids in enumerate(encoded):
            order = ROWS[rep % 4:] + ROWS[:rep % 4]
            outs = {}
            for r in order:
                outs[r], wall[r][rep][i], cpu[r][rep][i] = timed(lambda: fns[r](ids))
            if any(outs[r] != outs["plain"] for r in ROWS):
                bad = [r for r in ROWS if outs[r] != outs["plain"]]
                raise SystemExit(f"not lossless on prompt {i}: {bad} differ from plain greedy")
            tokens[i] = len(outs["plain"])
        loads.append(os.getloadavg()[0])

    def per_prompt(times, r):   # median over repeats, per prompt
        return [statistics.median(times[r][k][i] for k in range(args.repeats)) for i in range(len(encoded))]

    total = sum(tokens)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, {platform.processor() or ''} · torch {torch.__version__}"
          f" · transformers {transformers.__version__} · 1 thread · load average {min(loads):.1f}–{max(loads):.1f}")
    print(f"{len(encoded)} prompts × {args.repeats} repeats × {n} tokens (greedy, repetition penalty {rp}, "
          "all rows identical to plain); "
          "tok/s from per-prompt medians over repeats")
    for label, times in (("wall", wall), ("cpu", cpu)):
        med = {r: per_prompt(times, r) for r in ROWS}
        print(f"\n[{label}] " + " · ".join(f"{r} {total / sum(med[r]):.1f} tok/s" for r in ROWS))
        for a, b in (("callable", "engine"), ("callable", "assisted"), ("engine", "assisted"), ("callable", "plain")):
            ratios = [mb / ma for ma, mb in zip(med[a], med[b])]
            print(f"  {a} / {b}: total {sum(med[b]) / sum(med[a]):.3f}×, median per prompt "
                  f"{statistics.median(ratios):.3f}× (range {min(ratios):.2f}–{max(ratios):.2f})")


if __name__ == "__main__":
    main()
