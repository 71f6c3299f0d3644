"""Held-out policy study: each method's share of the oracle on prompts its settings were not chosen on.

Reads the traces and cost model that `gammatune bench --simulate --traces FILE`
saved (no model is loaded unless --retime asks), splits the prompts into even
and odd positions, chooses every tunable setting on the even ones (a grid per
method; GammaTune and GammaTune+ only among settings that change γ on at
least a third of steps) and prints, for the odd ones: the share of the
oracle's throughput, its spread over prompts (the standard error of the mean
per-prompt share), the gap to the best fixed γ in hindsight with its paired
spread, and the fraction of steps whose planned γ differs from the step
before. The best fixed γ is chosen on the odd prompts themselves (hindsight).

    gammatune bench --simulate --traces traces.json
    .venv/bin/python benchmarks/policy_study.py --traces traces.json --retime 3
    .venv/bin/python benchmarks/policy_study.py --traces traces.json --write-prior

--retime N times the decoder N more times (specdecode at the calibration
windows, as the trace cache does) and pools those steps with nothing else:
one noisy timing pass under load can make a longer window look cheaper than
a shorter one. --write-prior fits costaware's calibration prior on the even
prompts' traces and writes it to gammatune_tui/engine/calibration_prior.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

from gammatune_tui.bench import oracle
from gammatune_tui.bench import simulate as sim
from gammatune_tui.bench.cost_model import CALIBRATION_GAMMAS, CostModel, calibrate
from gammatune_tui.engine.confidence import PRIOR_FILE, Prior
from gammatune_tui.engine.policies import PolicySettings

FIXED = range(1, 17)
# γ0 is shared by every method (--gamma): it stays at 4; the rest is fitted on the even prompts
GRIDS: dict[str, dict[str, list[Any]]] = {
    "gammatune+": {"gamma0": [4], "gamma_min": [1, 2], "gamma_max": [6, 8, 16], "eta": [0.3, 0.5, 0.7],
                   "delta": [0, 1, 2], "tau": [0.05, 0.1, 0.2, 0.4]},
    "gammatune": {"gamma0": [4], "gamma_min": [1, 2], "gamma_max": [4, 6, 8, 16], "eta": [0.3, 0.5, 0.7],
                  "delta": [0, 1, 2]},
    "costaware": {"gamma0": [4], "gamma_min": [2], "gamma_max": [8], "calib_weight": [5, 20, 80],
                  "calib_forget": [0.9, 0.95, 0.98, 1]},
}
AT_DEFAULTS = ("hf-heuristic", "assistant-threshold", "adaptive-k")
MIN_CHANGED = 1 / 3


def load(path: Path) -> tuple[list[sim.Trace], CostModel, dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [sim.Trace.from_json(t) for t in data["traces"]], CostModel.from_json(data["cost_model"]), data


def retime(passes: int) -> CostModel:
    """`passes` timing passes of the demo pair's decoder (specdecode at the calibration windows), pooled."""
    from gammatune_tui.bench import protocol
    from gammatune_tui.engine.models import load_pair
    from gammatune_tui.prompts import load_prompt_set

    pair = load_pair(demo=True)
    p = load_prompt_set("code")[0]
    pid = protocol.PromptIds(p.id, pair.encode_prompt(p.text, raw=False))
    protocol.warm_up(pair, pid, protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                     baselines=()))
    events: list = []
    for _ in range(passes):
        for g in (1, *CALIBRATION_GAMMAS):
            protocol.run_policy(pair, PolicySettings.build("specdecode", g), pid, 256, keep_events=events)
    return calibrate(events)


class Run:
    """One method at one setting over a set of traces: per-prompt records and how often γ changed."""

    def __init__(self, traces: list[sim.Trace], cost: CostModel, method: str, gamma0: int, params: dict[str, Any]):
        self.records, changed, moved, steps = [], 0, 0, 0
        for t in traces:
            out: list[sim.SimStep] = []
            self.records.append(sim.play_trace(t, PolicySettings.build(method, gamma0, **params).make(), None,
                                               cost, out))
            changed += sum(a.gamma != b.gamma for a, b in zip(out, out[1:]))
            moved += sum(a.drafted != b.drafted for a, b in zip(out, out[1:]))
            steps += max(0, len(out) - 1)
        self.changed = changed / steps if steps else 0.0
        self.moved = moved / steps if steps else 0.0  # the drafted length, early stops included

    def throughput(self) -> float:
        return sum(r.tokens for r in self.records) / sum(r.wall_s for r in self.records)

    def per_prompt(self) -> list[float]:
        return [r.tokens / r.wall_s for r in self.records]


def study(traces: list[sim.Trace], cost: CostModel) -> list[dict[str, Any]]:
    even, odd = traces[0::2], traces[1::2]
    orc = {id(t): oracle.oracle_run(t, cost).record for t in traces}

    def share(run: Run, ts: list[sim.Trace]) -> float:
        return run.throughput() / (sum(orc[id(t)].tokens for t in ts) / sum(orc[id(t)].wall_s for t in ts))

    def per_prompt_share(run: Run, ts: list[sim.Trace]) -> list[float]:
        return [x / (orc[id(t)].tokens / orc[id(t)].wall_s) for x, t in zip(run.per_prompt(), ts)]

    fixed_odd = {g: Run(odd, cost, "specdecode", g, {}) for g in FIXED}
    best_g = max(fixed_odd, key=lambda g: share(fixed_odd[g], odd))
    best_fixed = fixed_odd[best_g]
    rows: list[dict[str, Any]] = []

    def row(label: str, run: Run, setting: dict[str, Any]) -> None:
        s = per_prompt_share(run, odd)
        diff = [a - b for a, b in zip(s, per_prompt_share(best_fixed, odd))]
        se = statistics.stdev(s) / math.sqrt(len(s))
        gap_se = statistics.stdev(diff) / math.sqrt(len(diff)) if any(diff) else 0.0
        rows.append({"method": label, "share": share(run, odd), "spread": se,
                     "gap": share(run, odd) - share(best_fixed, odd), "gap_spread": gap_se,
                     "changed": run.changed, "moved": run.moved, "setting": setting})

    for method, grid in GRIDS.items():
        best, best_share = None, -1.0
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            if setting.get("gamma_min", 1) > setting.get("gamma_max", 99):
                continue
            g0 = setting.pop("gamma0")
            run = Run(even, cost, method, g0, setting)
            ok = method == "costaware" or run.changed >= MIN_CHANGED
            if ok and share(run, even) > best_share:
                best, best_share = {"gamma0": g0, **setting}, share(run, even)
        if best is None:
            print(f"policy_study: no {method} setting changes γ on a third of steps", file=sys.stderr)
            continue
        params = {k: v for k, v in best.items() if k != "gamma0"}
        row(f"{method} (fitted on even)", Run(odd, cost, method, best["gamma0"], params), best)
    for method in ("gammatune+", "gammatune", "costaware", *AT_DEFAULTS):
        s = PolicySettings.build(method)
        row(f"{method} (shipped defaults)", Run(odd, cost, method, s.gamma0, {}), {"gamma0": s.gamma0})
    paper = {"eta": 0.5, "delta": 2, "tau": 0.4, "gamma_min": 4, "gamma_max": 16}
    row("gammatune+ (--paper-defaults)", Run(odd, cost, "gammatune+", 4, paper), {"gamma0": 4, **paper})
    row(f"best fixed γ in hindsight (γ = {best_g})", best_fixed, {"gamma": best_g})
    return rows


def print_table(rows: list[dict[str, Any]], label: str) -> None:
    print(f"held out: {label}")
    print(f"{'method':40} {'share':>6} {'±':>6} {'vs best fixed':>14} {'±':>6} {'γ changed':>9} {'d changed':>9}")
    for r in rows:
        print(f"{r['method']:40} {r['share']:6.3f} {r['spread']:6.3f} {r['gap']:+14.3f} {r['gap_spread']:6.3f} "
              f"{r['changed']:9.0%} {r['moved']:9.0%}")
    print("share: of the oracle's throughput on the odd prompts; ±: standard error over those prompts "
          "(for the gap: of the paired per-prompt differences); γ changed: steps whose planned γ differs "
          "from the step before; d changed: the same for the drafted length")
    for r in rows:
        if "fitted" in r["method"]:
            print(f"  {r['method']}: {r['setting']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, required=True, help="file written by `gammatune bench --simulate --traces`")
    ap.add_argument("--retime", type=int, default=0, help="time the demo pair's decoder this many more times")
    ap.add_argument("--cost", type=Path, default=None, help="a cost model JSON to use instead of the traces' own")
    ap.add_argument("--save-cost", type=Path, default=None, help="write the cost model used here")
    ap.add_argument("--write-prior", action="store_true", help="fit costaware's prior on the even prompts and ship it")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    traces, cost, data = load(args.traces)
    if args.cost:
        cost = CostModel.from_json(json.loads(args.cost.read_text(encoding="utf-8")))
    if args.retime:
        cost = retime(args.retime)
        cost.session_s = CostModel.from_json(data["cost_model"]).session_s
    if args.save_cost:
        args.save_cost.write_text(json.dumps(cost.to_json(), indent=1), encoding="utf-8")
    if args.write_prior:
        pairs = [(p, d == t) for tr in traces[0::2] for p, d, t in zip(tr.draft_prob, tr.draft_ids, tr.tokens)]
        prior = Prior.fit(pairs, source=f"demo pair, greedy, {len(traces[0::2])} even prompts of the code set, "
                                       f"{len(pairs)} positions (benchmarks/policy_study.py --write-prior)")
        PRIOR_FILE.write_text(json.dumps(prior.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {PRIOR_FILE}")
    key = data["key"]
    label = (f"{key['target']} / {key['draft']}, odd {len(traces[1::2])} of {len(traces)} prompts × "
             f"{key['max_new_tokens']} tokens, T = 0; verify(1..3) = "
             f"{', '.join(f'{cost.verify(k) * 1e3:.2f}' for k in (1, 2, 3))} ms, draft {cost.draft_token_s * 1e3:.2f} ms/token")
    rows = study(traces, cost)
    print_table(rows, label)
    if args.json:
        args.json.write_text(json.dumps({"label": label, "rows": rows, "cost_model": cost.to_json()}, indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
