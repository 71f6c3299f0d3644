"""Each method against the hindsight-optimal γ on saved traces: Table 2 with the oracle row, and regret.

Reads the traces and the cost model that `gammatune bench --simulate --traces FILE`
saved (no model is loaded), replays every method × γ0 with the exact simulator,
finds the oracle's windows on every trace (bench/sim/oracle.py), and prints Table 2
with the oracle as its top row, the share of the oracle's throughput each
method reaches (overall and per prompt category), and the oracle's own numbers.

    gammatune bench --simulate --traces traces.json --max-new-tokens 256
    .venv/bin/python benchmarks/oracle_regret.py --traces traces.json
    .venv/bin/python benchmarks/oracle_regret.py --traces traces.json --variant adaptive-k:gamma_min=1

`--variant METHOD:NAME=VALUE,...` adds a row for a method at other settings.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gammatune_tui.bench.sim import oracle
from gammatune_tui.bench.report import files
from gammatune_tui.bench.report import tables as report
from gammatune_tui.bench.sim import simulate as sim
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.results import aggregate
from gammatune_tui.engine.policies import METHODS, PolicySettings, parse_methods
from gammatune_tui.errors import GammatuneError
from gammatune_tui.prompts import load_prompt_set

PAPER_GAMMAS = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24)


def _variant(text: str) -> tuple[str, str, dict[str, str]]:
    method, _, rest = text.partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
    PolicySettings.build(method, 1, **params)  # validates
    return f"{method} ({', '.join(f'{k}={v}' for k, v in params.items())})", method, params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, required=True, help="file written by `gammatune bench --simulate --traces`")
    ap.add_argument("--prompts", default="code", help="the prompt set the traces came from (for categories)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--gammas", default=",".join(map(str, PAPER_GAMMAS)))
    ap.add_argument("--variant", action="append", default=[], help="METHOD:NAME=VALUE,... (repeatable)")
    ap.add_argument("--oracle-gamma-max", type=int, default=None, help="cap the oracle's window (default: none)")
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    args = ap.parse_args(argv)
    try:
        methods = parse_methods(args.methods)
        gammas = [int(g) for g in args.gammas.split(",")]
        variants = [_variant(v) for v in args.variant]
        data = json.loads(args.traces.read_text(encoding="utf-8"))
        traces = [sim.Trace.from_json(t) for t in data["traces"]]
        cost = CostModel.from_json(data["cost_model"])
        categories = {p.id: p.category for p in load_prompt_set(args.prompts)}
    except (GammatuneError, ValueError, OSError, KeyError) as exc:
        print(f"oracle_regret: {exc}", file=sys.stderr)
        return 2
    depth = min(t.off_depth for t in traces) + 1
    gammas = [g for g in gammas if g <= depth]
    console = Console()

    t0 = time.perf_counter()
    records = sim.simulate_sweep(traces, methods, gammas, cost)
    for label, method, params in variants:
        for r in sim.simulate_sweep(traces, [method], gammas, cost, params):
            r.method = label
            records.append(r)
    sweep_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    runs = [oracle.oracle_run(t, cost, gamma_max=args.oracle_gamma_max) for t in traces]
    oracle_s = time.perf_counter() - t0
    orecs = [r.record for r in runs]
    plain = sim.plain_records(traces)
    regret = oracle.regret(records + plain, orecs, categories)
    cells = aggregate(records + plain + orecs)
    label = f"{data['key']['target']} / {data['key']['draft']} ({len(traces)} prompts × {data['key']['max_new_tokens']} tokens)"
    derived = report.print_report(console, cells, gammas, label, title="Table 2 (simulated)", regret=regret)

    summary = oracle.summarize(traces, runs)
    t = Table(title=Text("The oracle (hindsight-optimal window at every step)"), title_justify="left")
    for c in ("tokens", "steps", "tokens/step", "mean window", "windows of 0", "tok/s (modelled)", "× target-only"):
        t.add_column(c, justify="right")
    zeros = sum(w == 0 for r in runs for w in r.windows)
    t.add_row(str(summary.tokens), str(summary.steps), f"{summary.tokens_per_step:.2f}", f"{summary.mean_window:.2f}",
              str(zeros), f"{summary.throughput:.1f}", f"{summary.speedup_over_plain:.2f}×")
    console.print(t)
    console.print(Text(f"replayed {len(methods) + len(variants)} methods × {len(gammas)} γ0 × {len(traces)} prompts "
                       f"in {sweep_s:.2f} s; the oracle on {len(traces)} traces in {oracle_s:.2f} s"))
    if args.json:
        files.write_json(args.json, {"derived": derived, "oracle": summary.to_json(),
                                      "oracle_windows": {r.prompt_id: r.windows for r in runs},
                                      "cost_model": cost.to_json(), "gammas": gammas})
    return 0


if __name__ == "__main__":
    sys.exit(main())
