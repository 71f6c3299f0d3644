"""`doctor --batch`'s prediction against live batched decoding on this CPU, run for run.

The prediction (bench/deploy/concurrency.py) prices each batch size's step
from the step itself, timed (bench/live/batch_costs.py), and takes acceptance
from batch-1 traces of the same prompts at the same answer length. This
script runs the thing it predicts: B sequences decoded together, greedy, as a
server steps them, once with the target alone and once at each fixed K, with
the code the timing runs (bench/live/ragged.py: one ragged batch, rejected
drafts left as masked columns, each token at its own position). transformers
has no batched speculative loop (assisted generation takes batch 1).

Run for run: each round times every (B, K) step for the prediction, and right
after each batch size's timing decodes that batch size live (the target alone
and speculative, alternating), so a busy spell moves both. The prompts are
cycled to B rows (below B = number of prompts, each group of B in turn, so
every prompt is decoded at every B). Both sides leave the prefill out. The
live speed-up is what a server that refills a finished row's slot gets: each
row's `new` tokens over the steps that row took, each step at the batch's
measured price, against the target alone (one step a token). The lockstep
column is the batch's own wall ratio instead, every row waiting for the
slowest (the rows ahead keep decoding meanwhile).

Each row's first tokens are checked against the same prompt decoded alone by
`generate`: padding changes the arithmetic, so a near-tie may flip, and the
count of rows that differ is printed, not asserted.

    python benchmarks/batched_live.py --pair demo --batch 1,4,16 --k 1,2,4
    python benchmarks/batched_live.py --pair smollm2 --draft self:int4 --batch 1,4,16 --k 3,5 -n 24
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch


def _load() -> str:
    return open("/proc/loadavg").read().split()[0]


def _groups(ids: list[list[int]], b: int) -> list[list[list[int]]]:
    """Batches of b rows covering every prompt: the prompts cycled (one batch when b ≥ the number of prompts)."""
    n = math.ceil(len(ids) / b)
    return [[ids[(g * b + i) % len(ids)] for i in range(b)] for g in range(n)]


def main() -> None:
    from gammatune_tui.bench.batch_prices import parse_batches
    from gammatune_tui.bench.deploy.concurrency import mid_answer, predict, tokens_per_step
    from gammatune_tui.bench.doctor.examine import DoctorConfig, record
    from gammatune_tui.bench.live.batch_costs import time_batches
    from gammatune_tui.bench.live.ragged import plain, speculative
    from gammatune_tui.bench.modes.common import quiet_transformers
    from gammatune_tui.engine import load_pair
    from gammatune_tui.engine.common.sampling import SamplingConfig
    from gammatune_tui.prompts import load_prompt_set

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", default="demo")
    ap.add_argument("--draft", default=None, help="e.g. self:int4 (default: the pair's draft)")
    ap.add_argument("--batch", default="1,4,16")
    ap.add_argument("--k", default="1,2,4")
    ap.add_argument("--prompts", default=None)
    ap.add_argument("--limit", type=int, default=4)
    ap.add_argument("-n", "--new", type=int, default=48)
    ap.add_argument("--repeats", type=int, default=3, help="rounds: each times the steps, then decodes live")
    ap.add_argument("--dtype", default="auto", help="the pair's precision (float32: live rows match generate exactly; "
                    "auto runs a real model in bfloat16 on a CPU with native bfloat16)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: this thread's CPU seconds for both sides (a shared machine; one torch thread)")
    args = ap.parse_args()
    quiet_transformers()
    torch.set_num_threads(1)
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    pair = load_pair(pair=args.pair, draft=args.draft, dtype=args.dtype) if args.draft else \
        load_pair(pair=args.pair, dtype=args.dtype)
    ks = [int(x) for x in args.k.split(",")]
    batches = parse_batches(args.batch)
    prompts = load_prompt_set(args.prompts or ("code" if args.pair == "demo" else "specbench"))[:args.limit]
    raw = args.pair == "demo"
    ids = [pair.encode_prompt(p.text, raw=raw) for p in prompts]
    pad = pair.tokenizer.pad_token_id if pair.tokenizer.pad_token_id is not None else 0
    cfg = DoctorConfig(args.pair, prompts, args.new, tuple(ks), raw, {}, SamplingConfig(temperature=0.0))
    measured = record(pair, cfg, lambda *_: None)
    with torch.no_grad():
        alone = [pair.target.generate(torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long),
                                      max_new_tokens=args.new, do_sample=False, pad_token_id=pad)[0, len(p):].tolist()
                 for p in ids]
    live: dict[tuple[int, int], list[float]] = {}          # (B, K) → speed-up per round
    lockstep: dict[tuple[int, int], list[float]] = {}      # (B, K) → the same, every row waiting for the slowest
    steps_ms: dict[tuple[int, int], list[float]] = {}      # (B, K) → live ms a step (K = 0: the target alone)
    differ: dict[int, int] = {}
    loads: dict[int, list[str]] = {}

    def decode(r: int, b: int) -> None:
        loads.setdefault(b, []).append(_load())
        for k in ks:
            sec_p = sec_s = 0.0
            steps = row_steps = 0
            for g, rows in enumerate(_groups(ids, b)):
                _, sec = plain(pair.target, rows, args.new, pad, clock)
                sec_p += sec
                got, own, n, sec = speculative(pair.target, pair.draft, rows, args.new, k, pad, clock)
                sec_s, steps, row_steps = sec_s + sec, steps + n, row_steps + sum(own)
                if r == 0:
                    start = (g * b) % len(ids)
                    differ[b] = differ.get(b, 0) + sum(
                        o[:len(alone[(start + i) % len(ids)])] != alone[(start + i) % len(ids)]
                        for i, o in enumerate(got))
            plain_step, spec_step = sec_p / (len(_groups(ids, b)) * args.new), sec_s / steps
            # a server refills a finished row's slot: each row costs its own steps at the batch's price
            live.setdefault((b, k), []).append(plain_step * args.new * b * len(_groups(ids, b))
                                               / (spec_step * row_steps))
            lockstep.setdefault((b, k), []).append(sec_p / sec_s)
            steps_ms.setdefault((b, 0), []).append(plain_step * 1e3)
            steps_ms.setdefault((b, k), []).append(spec_step * 1e3)

    answer = mid_answer(tokens_per_step(measured.traces, ks, args.new)[0], args.new)
    costs = time_batches(pair.target, pair.draft, ids, answer, batches, ks, pair.device, pad=pad,
                         rounds=args.repeats, after=decode, clock=clock)
    pred = predict(measured.traces, costs, ks, args.new)
    med = statistics.median
    print(f"{args.pair} (draft {args.draft or 'the pair draft'}), {len(ids)} prompts "
          f"({min(map(len, ids))}–{max(map(len, ids))} tokens), {args.new} tokens, {args.repeats} rounds, "
          f"{args.clock} clock")
    print("| B | K | predicted (± timing) | live, median [lowest–highest] | within | lockstep | ms a step, predicted / "
          "live (target alone; speculative) | load |")
    print("|---:|---:|---|---|---|---:|---|---|")
    for b in batches:
        for k in ks:
            c, lv = pred.cells[(b, k)], live[(b, k)]
            lo, hi = c.speedup - c.spread, c.speedup + c.spread
            m = med(lv)
            gap = f"{m - hi:+.2f}" if m > hi else f"{m - lo:+.2f}"       # live's median past the spread's end
            verdict = ("yes" if lo <= m <= hi else f"overlaps ({gap})" if min(lv) <= hi and max(lv) >= lo
                       else f"no ({gap})")
            print(f"| {b} | {k} | {c.speedup:.2f}× (± {c.spread:.2f}) | {m:.2f}× [{min(lv):.2f}–{max(lv):.2f}] | "
                  f"{verdict} | {med(lockstep[(b, k)]):.2f}× | {c.plain_s * 1e3:.1f} / {med(steps_ms[(b, 0)]):.1f}; "
                  f"{c.spec_s * 1e3:.1f} / {med(steps_ms[(b, k)]):.1f} | {', '.join(loads[b])} |")
    for b in batches:
        best_live = max(ks, key=lambda k: med(live[(b, k)]))
        print(f"B={b}: best K predicted {pred.best(b).k}, live {best_live if med(live[(b, best_live)]) > 1 else 0}; "
              f"overhead ms a step (target alone; K={ks[-1]}): "
              f"{pred.cells[(b, ks[-1])].plain_overhead_s * 1e3:.2f}; {pred.cells[(b, ks[-1])].spec_overhead_s * 1e3:.2f}; "
              f"rows differing from batch-1 generate: {differ.get(b, 0)}/{sum(len(g) for g in _groups(ids, b))}")
    live_cross = next((b for i, b in enumerate(batches)
                       if all(max(med(live[(x, k)]) for k in ks) <= 1.0 for x in batches[i:])), None)
    print(f"crossover: predicted {pred.crossover()}, live {live_cross}")


if __name__ == "__main__":
    main()
