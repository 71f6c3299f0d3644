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
    .venv/bin/python benchmarks/policy_study.py --traces traces.json --retime 3 --save-cost cost.json
    .venv/bin/python benchmarks/policy_study.py --traces traces07.json --cost cost.json
    .venv/bin/python benchmarks/policy_study.py --traces traces.json --write-prior

--retime N times the decoder N more times (specdecode at every calibration
window, as the trace cache does, sampled when the traces are) and pools those
steps with nothing else:
one noisy timing pass under load can make a longer window look cheaper than
a shorter one; each pass is kept too, so the spread across timing passes
survives, and --save-cost / --cost carry the pooled model and its passes to
another trace file (another temperature). --write-prior fits costaware's
calibration prior on the even prompts' traces and writes it to
gammatune_tui/engine/policies/calibration_prior.json.
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

from gammatune_tui.bench.sim import oracle, reference
from gammatune_tui.bench.sim import simulate as sim
from gammatune_tui.bench.sim.cost_model import CALIBRATION_GAMMAS, CostModel, calibrate
from gammatune_tui.bench.sim.trace_kinds import trace_from_json
from gammatune_tui.engine.policies.confidence import PRIOR_FILE, Prior
from gammatune_tui.engine.policies import DEFAULT_GAMMA0, PAPER_DEFAULTS, PolicySettings

# γ0 is shared by every method (--gamma): it stays at 4; the rest is fitted on the even prompts
GRIDS: dict[str, dict[str, list[Any]]] = {
    "gammatune+": {"gamma0": [4], "gamma_min": [1, 2], "gamma_max": [6, 8, 16], "eta": [0.3, 0.5, 0.7],
                   "delta": [0, 1, 2], "tau": [0.05, 0.1, 0.2, 0.3, 0.4]},
    "gammatune": {"gamma0": [4], "gamma_min": [1, 2], "gamma_max": [4, 6, 8, 16], "eta": [0.3, 0.5, 0.7],
                  "delta": [0, 1, 2]},
    "costaware": {"gamma0": [4], "gamma_min": [2], "gamma_max": [8], "calib_weight": [2, 5, 20],
                  "calib_forget": [0.9, 0.95, 0.98, 1]},
}
AT_DEFAULTS = ("hf-heuristic", "assistant-threshold", "adaptive-k")
MIN_CHANGED = 1 / 3


def load(path: Path) -> tuple[list[Any], CostModel, list[CostModel], dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return ([trace_from_json(t) for t in data["traces"]], CostModel.from_json(data["cost_model"]),
            [CostModel.from_json(c) for c in data.get("cost_passes", [])], data)


def retime(passes: int, data: dict[str, Any]) -> tuple[CostModel, list[CostModel]]:
    """`passes` timing passes of the demo pair's decoder: pooled, and each.

    The same timing as the trace cache's (`time_decoder`: every calibration
    window taken in turn along one answer, sampled when the traces were), on
    the set's first prompt at its token budget.
    """
    from gammatune_tui.bench.live import protocol
    from gammatune_tui.bench.modes.trace_cache import time_decoder
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.engine.common.sampling_config import SamplingConfig

    key = data["key"]
    sampling = SamplingConfig(**key["sampling"]) if isinstance(key.get("sampling"), dict) else None
    pair = load_pair(demo=True)
    pid = protocol.PromptIds(*key["prompts"][0])
    protocol.warm_up(pair, pid, protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                     baselines=()))
    return time_decoder(pair, pid, key["max_new_tokens"], data.get("max_window", max(CALIBRATION_GAMMAS)),
                        data["traces"][0].get("session_s", 0.0), sampling, passes=passes)


class Run:
    """One method at one setting over a set of traces: its throughput and how often γ (and d) changed."""

    def __init__(self, traces: list[Any], cost: CostModel, method: str, gamma0: int, params: dict[str, Any]):
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


def fit(even: list[Any], cost: CostModel) -> dict[str, dict[str, Any]]:
    """Each grid's best setting on the even prompts (GammaTune's only among those that move γ)."""
    orc = [oracle.oracle_run(t, cost).record for t in even]
    o_thr = sum(r.tokens for r in orc) / sum(r.wall_s for r in orc)
    out: dict[str, dict[str, Any]] = {}
    for method, grid in GRIDS.items():
        best, best_share = None, -1.0
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            if setting["gamma_min"] > setting["gamma_max"]:
                continue
            g0 = setting.pop("gamma0")
            run = Run(even, cost, method, g0, setting)
            ok = method == "costaware" or run.changed >= MIN_CHANGED
            if ok and run.throughput() / o_thr > best_share:
                best, best_share = {"gamma0": g0, **setting}, run.throughput() / o_thr
        if best is None:
            print(f"policy_study: no {method} setting changes γ on a third of steps", file=sys.stderr)
        else:
            out[method] = best
    return out


def study(traces: list[Any], cost: CostModel, passes: list[CostModel]) -> tuple[list[dict[str, Any]], dict]:
    even, odd = traces[0::2], traces[1::2]
    fitted = fit(even, cost)
    entries: list[tuple[str, str, dict[str, Any]]] = []
    for method, best in fitted.items():
        entries.append((f"{method} (fitted on even)", method, {k: v for k, v in best.items() if k != "gamma0"}))
    for method in ("gammatune+", "gammatune", "costaware", *AT_DEFAULTS):
        entries.append((f"{method} (shipped defaults)", method, {}))
    entries.append(("gammatune+ (--paper-defaults)", "gammatune+", dict(PAPER_DEFAULTS)))
    rows = reference.share_rows(odd, cost, passes, entries, [DEFAULT_GAMMA0])
    best = next(r for r in rows if r.name == reference.BEST_FIXED)
    out = []
    for r in rows:
        entry = next((e for e in entries if e[0] == r.name), None)
        run = Run(odd, cost, entry[1], DEFAULT_GAMMA0, entry[2]) if entry else None
        out.append({"method": r.label, "share": r.share, "spread": r.spread, "pass_spread": r.pass_spread,
                    "gap": r.share - best.share, "gap_spread": max(r.spread, best.spread), "rank": r.rank,
                    "changed": run.changed if run else None, "moved": run.moved if run else None,
                    "reference": r.reference})
    return out, fitted


def print_table(rows: list[dict[str, Any]], fitted: dict, label: str) -> None:
    print(f"held out: {label}")
    print(f"{'#':>3} {'method':40} {'share':>6} {'±':>6} {'vs best fixed':>14} {'γ changed':>9} {'d changed':>9}")
    for r in rows:
        pct = (lambda x: "" if x is None else f"{x:.0%}")
        print(f"{r['rank']:>3} {r['method']:40} {r['share']:6.3f} {r['spread']:6.3f} "
              f"{r['gap']:+8.3f} ±{r['gap_spread']:.3f} {pct(r['changed']):>9} {pct(r['moved']):>9}")
    print("share: of the oracle's throughput on the odd prompts, each method at γ0 = "
          f"{DEFAULT_GAMMA0}; ±: the spread across timing passes + the standard error over prompts; the gap to "
          "the best fixed γ counts only beyond the larger of the two spreads (#: shared rank = within it); "
          "γ changed: steps whose planned γ differs from the step before; d changed: the same for the drafted length")
    for method, best in fitted.items():
        print(f"  {method} fitted on the even prompts: {best}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, required=True, help="file written by `gammatune bench --simulate --traces`")
    ap.add_argument("--retime", type=int, default=0, help="time the demo pair's decoder this many more times")
    ap.add_argument("--cost", type=Path, default=None,
                    help="a cost model JSON (as --save-cost writes it) to use instead of the traces' own")
    ap.add_argument("--save-cost", type=Path, default=None, help="write the cost model used here, and its passes")
    ap.add_argument("--write-prior", action="store_true", help="fit costaware's prior on the even prompts and ship it")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    traces, cost, passes, data = load(args.traces)
    if args.cost:
        saved = json.loads(args.cost.read_text(encoding="utf-8"))
        if "cost_model" in saved:  # as --save-cost writes it: the pooled model and each timing pass
            cost, passes = CostModel.from_json(saved["cost_model"]), [CostModel.from_json(c) for c in
                                                                      saved.get("cost_passes", [])]
        else:
            cost, passes = CostModel.from_json(saved), []
    if args.retime:
        cost, passes = retime(args.retime, data)
    if args.save_cost:
        args.save_cost.write_text(json.dumps({"cost_model": cost.to_json(), "cost_passes": [c.to_json() for c in passes]},
                                             indent=1), encoding="utf-8")
    if args.write_prior:
        if any(getattr(t, "sampled", False) for t in traces):
            print("policy_study: --write-prior fits on greedy traces", file=sys.stderr)
            return 2
        pairs = [(p, d == t) for tr in traces[0::2] for p, d, t in zip(tr.draft_prob, tr.draft_ids, tr.tokens)]
        prior = Prior.fit(pairs, source=f"demo pair, greedy, {len(traces[0::2])} even prompts of the code set, "
                                       f"{len(pairs)} positions (benchmarks/policy_study.py --write-prior)")
        PRIOR_FILE.write_text(json.dumps(prior.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {PRIOR_FILE}")
    key = data["key"]
    temp = (key.get("sampling") or {}).get("temperature", 0.0) if isinstance(key.get("sampling"), dict) else 0.0
    label = (f"{key['target']} / {key['draft']}, odd {len(traces[1::2])} of {len(traces)} prompts × "
             f"{key['max_new_tokens']} tokens, T = {temp:g}, {len(passes)} timing passes; verify(1..3) = "
             f"{', '.join(f'{cost.verify(k) * 1e3:.2f}' for k in (1, 2, 3))} ms, draft {cost.draft_token_s * 1e3:.2f} ms/token")
    rows, fitted = study(traces, cost, passes)
    print_table(rows, fitted, label)
    if args.json:
        args.json.write_text(json.dumps({"label": label, "rows": rows, "fitted": fitted, "cost_model": cost.to_json()},
                                        indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
