"""Prompt lookup's n-gram sizes on the demo target, with the exact trace simulator; and which prompt categories gain.

The target decodes each prompt of a set once (greedy); prompt lookup's
proposals are then recomputed for every (ngram_min, ngram_max) in the grid
(they are a function of the text alone), and every policy is played exactly
over them (bench/sim/lookup_trace.py). Time comes from one cost model calibrated
on the live decoder drafting by prompt lookup, so all settings are priced
alike and only their proposals differ. Reported: mean tokens per step, the
acceptance rate and the modelled speedup over one-token steps (the same
decoder drafting nothing, priced by the same cost model: Σ plain / Σ policy),
over the whole set and per prompt category. Both sides come from one cost
model, so machine load while the traces were recorded does not leak in.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lookup_ngrams.py [--prompts code] [--max-new-tokens 128]
        [--json out.json]
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

from gammatune_tui.bench.live import protocol  # noqa: E402
from gammatune_tui.bench.sim.cost_model import CALIBRATION_GAMMAS, calibrate  # noqa: E402
from gammatune_tui.bench.sim.lookup_trace import record_lookup_trace, repropose  # noqa: E402
from gammatune_tui.bench.sim.simulate import play_trace  # noqa: E402
from gammatune_tui.engine import PolicySettings, load_pair  # noqa: E402
from gammatune_tui.prompts import load_prompt_set  # noqa: E402

GRID = [(1, 1), (1, 2), (1, 3), (1, 4), (1, 6), (2, 2), (2, 3), (2, 4), (3, 3), (3, 4)]
POLICIES = [("specdecode", 2), ("specdecode", 4), ("specdecode", 8), ("hf-heuristic", 4), ("gammatune", 4),
            ("gammatune+", 4), ("adaptive-k", 4)]
DEPTH = 24


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", default="code")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pair = load_pair(demo=True, device="cpu", dtype="float32", threads=args.threads, drafter="prompt-lookup")
    prompts = load_prompt_set(args.prompts)
    pid = [protocol.PromptIds(p.id, pair.encode_prompt(p.text, raw=True)) for p in prompts]
    category = {p.id: p.category for p in prompts}
    t0 = time.perf_counter()
    base = [record_lookup_trace(pair, p.id, p.ids, args.max_new_tokens, DEPTH, pair.eos_ids, 1, 3) for p in pid]
    record_s = time.perf_counter() - t0
    events: list = []
    for g in CALIBRATION_GAMMAS:  # the live decoder drafting by prompt lookup prices every step
        protocol.run_policy(pair, PolicySettings.build("specdecode", g), pid[0], args.max_new_tokens,
                            keep_events=events)
    cost = calibrate(events)
    cost.session_s = max(0.0, cost.outside_s - base[0].session_s)
    # one-token steps under the same cost model: what drafting nothing would cost on each prompt
    one = cost.verify(1) + cost.step_s + cost.emit_token_s
    plain = {t.prompt_id: t.session_s + cost.session_s + len(t.tokens) * one for t in base}

    rows = []
    for lo, hi in GRID:
        traces = [repropose(t, lo, hi) for t in base]
        for method, g in POLICIES:
            recs = [play_trace(t, PolicySettings.build(method, g).make(), None, cost) for t in traces]
            by_cat: dict[str, list] = {}
            for r in recs:
                by_cat.setdefault(category[r.prompt_id], []).append(r)

            def speed(rs: list) -> float:
                return sum(plain[r.prompt_id] for r in rs) / sum(r.wall_s for r in rs)

            rows.append({
                "ngram_min": lo, "ngram_max": hi, "method": method, "gamma0": g,
                "tokens_per_step": sum(r.tokens for r in recs) / sum(r.steps for r in recs),
                "acceptance_rate": sum(r.accepted for r in recs) / max(1, sum(r.drafted for r in recs)),
                "steps": sum(r.steps for r in recs),
                "steps_with_a_proposal": sum(r.pos_drafted[0] if r.pos_drafted else 0 for r in recs),
                "speedup_over_plain": speed(recs),
                "per_category": {c: speed(rs) for c, rs in sorted(by_cat.items())},
            })
    result = {
        "prompts": args.prompts, "n_prompts": len(pid), "max_new_tokens": args.max_new_tokens,
        "tokens": sum(len(t.tokens) for t in base), "record_s": record_s, "cost_model": cost.to_json(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.processor() or '?'}",
        "load_average": os.getloadavg(), "torch": torch.__version__, "rows": rows,
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    print(f"{len(pid)} prompts ({args.prompts}), {result['tokens']} greedy tokens; cost model: "
          f"verify(1) {cost.verify(1) * 1e3:.2f} ms, verify(5) {cost.verify(5) * 1e3:.2f} ms, "
          f"draft/token {cost.draft_token_s * 1e6:.0f} µs; load {os.getloadavg()[0]:.1f}")
    print("\n| n-gram | " + " | ".join(f"{m} γ0={g}" for m, g in POLICIES) + " | mean |")
    print("|---|" + "---:|" * (len(POLICIES) + 1))
    for lo, hi in GRID:
        mine = [r for r in rows if (r["ngram_min"], r["ngram_max"]) == (lo, hi)]
        cells = [f"{r['speedup_over_plain']:.2f}× ({r['tokens_per_step']:.2f})" for r in mine]
        mean = statistics.fmean(r["speedup_over_plain"] for r in mine)
        print(f"| {lo}–{hi} | " + " | ".join(cells) + f" | {mean:.3f}× |")
    print("\n(modelled speedup over one-token steps; tokens per step in brackets)")
    cats = sorted({c for r in rows for c in r["per_category"]})
    print("\nper category at the default (1–3):\n\n| method | " + " | ".join(cats) + " |")
    print("|---|" + "---:|" * len(cats))
    for r in rows:
        if (r["ngram_min"], r["ngram_max"]) == (1, 3):
            print(f"| {r['method']} γ0={r['gamma0']} | " + " | ".join(f"{r['per_category'][c]:.2f}×" for c in cats) + " |")


if __name__ == "__main__":
    main()
