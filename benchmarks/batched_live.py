"""`doctor --batch`'s prediction against live batched decoding on this CPU.

The prediction (bench/deploy/concurrency.py) prices each batch size's step
from timed forwards and takes acceptance from batch-1 traces. This script runs
the thing it predicts: B sequences decoded together, greedy, as a server
steps them, once with the target alone and once with a fixed K (every
sequence drafts K tokens a step; one target forward verifies B × (K + 1)),
and times both, alternating. transformers has no batched speculative loop
(assisted generation takes batch 1), so this one is written here, in the way
a server keeps a ragged batch in one tensor: each sequence's rejected drafts
stay in the cache as masked columns, and each token gets its own position.

Each live sequence's text is checked against the same prompt decoded alone
(batch 1, `generate`): padding changes the arithmetic, so a near-tie may flip,
and the count of sequences that differ is printed, not asserted.

    python benchmarks/batched_live.py --pair demo --batch 1,4,16 --k 1,2,4
    python benchmarks/batched_live.py --pair smollm2 --draft self:int4 --batch 1,4,16 --k 1,3,5
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch


def _forward(model: Any, cache: Any, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> tuple[Any, Any]:
    from gammatune_tui.engine.runners.hf_compat import cache_kw, output_cache

    out = model(input_ids=ids, attention_mask=mask, position_ids=pos, **cache_kw(model, cache), use_cache=True)
    return out.logits, output_cache(out)


class Batch:
    """One model's side of a ragged batch: its cache, which of its columns are real, and each row's length."""

    def __init__(self, model: Any, prompts: list[list[int]], pad: int):
        width = max(map(len, prompts))
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        self.mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        self.lengths = torch.tensor([len(p) for p in prompts])
        pos = (self.mask.cumsum(1) - 1).clamp(min=0)
        self.model = model
        self.logits, self.cache = _forward(model, None, ids, self.mask, pos)
        self.logits = self.logits[:, -1:]

    def feed(self, ids: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
        """Columns `ids` (B × n) appended; `real` (B × n, 0/1) says which are tokens and which fill a ragged row."""
        pos = self.lengths[:, None] + real.cumsum(1) - 1
        self.mask = torch.cat([self.mask, real], 1)
        logits, self.cache = _forward(self.model, self.cache, ids, self.mask, pos.clamp(min=0))
        self.lengths = self.lengths + real.sum(1)
        return logits

    def keep(self, n_new: int, kept: torch.Tensor) -> None:
        """Of the last `n_new` columns, keep the first `kept[b]` of row b as real; the rest become masked."""
        cols = torch.arange(n_new)[None, :]
        tail = self.mask[:, -n_new:]
        keep = (cols < kept[:, None]) & tail.bool()
        self.lengths = self.lengths - tail.sum(1) + keep.sum(1)
        self.mask = torch.cat([self.mask[:, :-n_new], keep.long()], 1)


@torch.no_grad()
def plain(target: Any, prompts: list[list[int]], new: int, pad: int) -> list[list[int]]:
    t = Batch(target, prompts, pad)
    out = [[] for _ in prompts]
    nxt = t.logits[:, -1].argmax(-1)
    for _ in range(new):
        for b, x in enumerate(nxt.tolist()):
            out[b].append(x)
        nxt = t.feed(nxt[:, None], torch.ones(len(prompts), 1, dtype=torch.long))[:, -1].argmax(-1)
    return out


@torch.no_grad()
def speculative(target: Any, draft: Any, prompts: list[list[int]], new: int, k: int, pad: int) -> tuple[list[list[int]], int]:
    """Greedy, fixed K, lockstep: returns each row's first `new` tokens and the number of steps taken."""
    B = len(prompts)
    t, d = Batch(target, prompts, pad), Batch(draft, prompts, pad)
    out: list[list[int]] = [[] for _ in prompts]
    last = t.logits[:, -1].argmax(-1)                       # the target's first token, as generate's
    for b, x in enumerate(last.tolist()):
        out[b].append(x)
    # what the draft has not read yet: up to two tokens a row (a fully accepted window leaves its last draft)
    pending = torch.stack([torch.full((B,), pad), last], 1)
    pending_real = torch.stack([torch.zeros(B, dtype=torch.long), torch.ones(B, dtype=torch.long)], 1)
    steps = 0
    while min(map(len, out)) < new:
        steps += 1
        drafts = []
        logits = d.feed(pending, pending_real)[:, -1]
        for i in range(k):
            x = logits.argmax(-1)
            drafts.append(x)
            if i < k - 1:
                logits = d.feed(x[:, None], torch.ones(B, 1, dtype=torch.long))[:, -1]
        window = torch.stack([last, *drafts], 1)                # B × (K + 1)
        v = t.feed(window, torch.ones(B, k + 1, dtype=torch.long)).argmax(-1)
        agree = (v[:, :k] == window[:, 1:]).long().cumprod(1)
        acc = agree.sum(1)                                      # drafts kept per row
        t.keep(k + 1, acc + 1)
        if k > 1:                                               # the drafts it read: d1 … d(K-1)
            d.keep(k - 1, acc.clamp(max=k - 1))
        fix = v.gather(1, acc[:, None])[:, 0]                   # the target's token after the kept drafts
        for b in range(B):
            out[b].extend(window[b, 1:1 + acc[b]].tolist() + [fix[b].item()])
        full = acc == k
        pending = torch.stack([torch.where(full, window[:, k], torch.full_like(fix, pad)), fix], 1)
        pending_real = torch.stack([full.long(), torch.ones(B, dtype=torch.long)], 1)
        last = fix
    return [o[:new] for o in out], steps


def main() -> None:
    from gammatune_tui.bench.batch_prices import parse_batches
    from gammatune_tui.bench.deploy.concurrency import predict
    from gammatune_tui.bench.doctor.examine import DoctorConfig, record
    from gammatune_tui.bench.live.batch_costs import time_batches
    from gammatune_tui.bench.modes.common import quiet_transformers
    from gammatune_tui.prompts import load_prompt_set
    from gammatune_tui.engine import load_pair
    from gammatune_tui.engine.common.sampling import SamplingConfig

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", default="demo")
    ap.add_argument("--draft", default=None, help="e.g. self:int4 (default: the pair's draft)")
    ap.add_argument("--batch", default="1,4,16")
    ap.add_argument("--k", default="1,2,4")
    ap.add_argument("--prompts", default=None)
    ap.add_argument("--limit", type=int, default=4)
    ap.add_argument("-n", "--new", type=int, default=48)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    quiet_transformers()
    torch.set_num_threads(1)
    pair = load_pair(pair=args.pair, draft=args.draft) if args.draft else load_pair(pair=args.pair)
    ks = [int(x) for x in args.k.split(",")]
    batches = parse_batches(args.batch)
    prompts = load_prompt_set(args.prompts or ("code" if args.pair == "demo" else "specbench"))[:args.limit]
    raw = args.pair == "demo"
    ids = [pair.encode_prompt(p.text, raw=raw) for p in prompts]
    cfg = DoctorConfig(args.pair, prompts, args.new, tuple(ks), raw, {}, SamplingConfig(temperature=0.0))
    measured = record(pair, cfg, lambda *_: None)
    context = len(ids[0]) + args.new // 2
    costs = time_batches(pair.target, pair.draft, ids[0], context, batches, [k + 1 for k in ks], pair.device)
    pred = predict(measured.traces, costs, ks, args.new)
    pad = pair.tokenizer.pad_token_id if pair.tokenizer.pad_token_id is not None else 0
    print(f"{args.pair} (draft {args.draft or 'the pair draft'}), {len(ids)} prompts cycled, {args.new} tokens, "
          f"{args.repeats} alternating repeats; load {open('/proc/loadavg').read().split()[:3]}")
    print("batch  K  predicted (± timing)  live  live plain tok/s  rows differing from batch-1 greedy")
    for b in batches:
        rows = [ids[i % len(ids)] for i in range(b)]
        alone = {i: plain(pair.target, [ids[i]], args.new, pad)[0] for i in range(min(b, len(ids)))}
        for k in ks:
            wp, ws = [], []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                plain(pair.target, rows, args.new, pad)
                wp.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                got, _ = speculative(pair.target, pair.draft, rows, args.new, k, pad)
                ws.append(time.perf_counter() - t0)
            live = statistics.median(wp) / statistics.median(ws)
            differ = sum(got[i] != alone[i % len(ids)] for i in range(b))
            c = pred.cells[(b, k)]
            print(f"{b:5d} {k:2d}  {c.speedup:6.2f}× (± {c.spread:.2f})      {live:5.2f}×  "
                  f"{b * args.new / statistics.median(wp):8.1f}        {differ}/{b}")
        print(f"      best K predicted {pred.best(b).k}")
    print(f"predicted crossover: {pred.crossover()}")


if __name__ == "__main__":
    main()
