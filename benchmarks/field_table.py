"""The field table (issue 27): every γ policy on the same held-out rows, and AdaEDL's λ0 fitted on the even prompts.

Reads trace files that `gammatune bench --simulate --traces FILE` wrote (and,
optionally, the cost model `policy_study.py --save-cost` wrote for each), one
per temperature. First it fits AdaEDL's λ0 (`edl_lambda`, the one free
default of the peers: the paper sweeps it) on the **even** prompts of every
set together, as fit_defaults.py fitted GammaTune+'s (the highest mean share
of the oracle at γ0 = 4), and shows how the sources' other published values
(p_min, svip_h) fare there beside their neighbours. Then, on the **odd**
prompts only, every method at the shipped defaults (λ0 as fitted unless
--lambda0 says otherwise) gives:

* its share of the oracle at γ0 = 4 (the CLI default), with the spread
  across timing passes + the standard error over prompts, beside the
  reference rows, ranked only where a gap exceeds the spread;
* the paper's Table 2: throughput at each γ0 of the paper's sweep over the
  mean over γ0 of specdecode's, reported as mean ± std across γ0.

    .venv/bin/python benchmarks/field_table.py traces0.json:cost0.json traces07.json:cost07.json --json field.json

`--limit N` reads only the first N prompts of each file, so a set recorded
with more prompts can be set beside one recorded with fewer on the same ones.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from gammatune_tui.bench.report.tables import table2
from gammatune_tui.bench.sim import oracle, reference
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.engine.policies import DEFAULT_GAMMA0, METHODS, grouped_methods

_spec = importlib.util.spec_from_file_location("policy_study", Path(__file__).with_name("policy_study.py"))
policy_study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(policy_study)

PAPER_GAMMAS = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24)
LAMBDAS = [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # λ0 (the bound 1 − √(0.2·H) is in (−∞, 1])
SENSITIVITY = {"p-min": ("p_min", [0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9]),
               "svip": ("svip_h", [0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6])}


class Set:
    """One trace file (one temperature): its cost model, passes, and the even and odd prompts."""

    def __init__(self, spec: str, limit: int | None = None):
        traces_path, _, cost_path = spec.partition(":")
        traces, cost, passes, data = policy_study.load(Path(traces_path))
        traces = traces[:limit]   # the first N prompts: sets recorded with different --limit compared on the same ones
        if cost_path:
            saved = json.loads(Path(cost_path).read_text(encoding="utf-8"))
            cost = CostModel.from_json(saved["cost_model"])
            passes = [CostModel.from_json(c) for c in saved.get("cost_passes", [])]
        self.cost, self.passes, self.data = cost, passes, data
        self.even, self.odd = traces[0::2], traces[1::2]
        sampling = data["key"].get("sampling")
        self.label = f"T = {sampling['temperature']:g}" if isinstance(sampling, dict) else "T = 0"
        orc = [oracle.oracle_run(t, cost).record for t in self.even]
        self.even_oracle = sum(r.tokens for r in orc) / sum(r.wall_s for r in orc)

    def even_share(self, method: str, params: dict[str, Any]) -> float:
        return policy_study.Run(self.even, self.cost, method, DEFAULT_GAMMA0, params).throughput() / self.even_oracle


def fit_lambda(sets: list[Set]) -> float:
    """AdaEDL's λ0 with the highest mean share of the oracle on the even prompts of every set."""
    rows = [(lam, [s.even_share("adaedl", {"edl_lambda": lam}) for s in sets]) for lam in LAMBDAS]
    rows.sort(key=lambda r: -sum(r[1]) / len(r[1]))
    print("adaedl λ0 on the even prompts (share of the oracle at γ0 = 4; best first):")
    for lam, shares in rows[:6]:
        print(f"  λ0 {lam:4.2f}  " + "  ".join(f"{s.label}: {x:.4f}" for s, x in zip(sets, shares)))
    worst = rows[-1]
    print(f"  (worst: λ0 {worst[0]:.2f}  " + "  ".join(f"{x:.4f}" for x in worst[1]) + ")")
    for method, (name, grid) in SENSITIVITY.items():
        line = "  ".join(f"{v:g}: " + "/".join(f"{s.even_share(method, {name: v}):.3f}" for s in sets) for v in grid)
        print(f"{method} {name} on the even prompts ({'/'.join(s.label for s in sets)}): {line}")
    return rows[0][0]


def held_out(s: Set, lambda0: float) -> list[dict[str, Any]]:
    """Every method's row on the odd prompts: share at γ0 = 4 with spread and rank, and Table 2 over γ0."""
    own = {"adaedl": {"edl_lambda": lambda0}}
    entries = [(m, m, own.get(m, {})) for m in METHODS]
    rows = reference.share_rows(s.odd, s.cost, s.passes, entries, [DEFAULT_GAMMA0])
    max_new = min(t.max_new_tokens for t in s.odd)
    thr: dict[str, dict[int | None, float]] = {}
    for m in METHODS:
        thr[m] = {g: policy_study.Run(s.odd, s.cost, m, g, own.get(m, {})).throughput() for g in PAPER_GAMMAS}
    orc = [oracle.oracle_run(t, s.cost, max_new).record for t in s.odd]
    thr["oracle"] = {None: sum(r.tokens for r in orc) / sum(r.wall_s for r in orc)}
    t2 = table2(thr)
    group = {m: words for words, names in grouped_methods() for m in names}
    out = []
    for r in rows:
        run = policy_study.Run(s.odd, s.cost, r.name, DEFAULT_GAMMA0, own.get(r.name, {})) if r.name in METHODS else None
        out.append({"rank": r.rank, "method": r.label, "group": group.get(r.name, "reference"), "share": r.share,
                    "spread": r.spread, "pass_spread": r.pass_spread, "changed": run.changed if run else None,
                    "moved": run.moved if run else None,
                    "table2": [t2[r.name].mean, t2[r.name].std] if r.name in t2 else None})
    out.append({"rank": "", "method": "oracle", "group": "reference", "share": 1.0, "spread": 0.0, "pass_spread": 0.0,
                "changed": None, "moved": None, "table2": [t2["oracle"].mean, 0.0]})
    return out


def print_markdown(s: Set, rows: list[dict[str, Any]]) -> None:
    cm = s.cost
    print(f"\n{s.label}: odd {len(s.odd)} prompts × {min(t.max_new_tokens for t in s.odd)} tokens, "
          f"{len(s.passes)} timing passes; verify(1..3) = "
          f"{', '.join(f'{cm.verify(k) * 1e3:.2f}' for k in (1, 2, 3))} ms, draft {cm.draft_token_s * 1e3:.2f} ms/token")
    print("| rank | method | group | share of the oracle (γ0 = 4) | ± | × specdecode (Table 2, mean ± std over γ0) | d changed |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        t2 = f"{r['table2'][0]:.2f} ± {r['table2'][1]:.2f}" if r["table2"] else "—"
        moved = "" if r["moved"] is None else f"{r['moved']:.0%}"
        print(f"| {r['rank']} | {r['method']} | {r['group']} | {r['share']:.3f} | {r['spread']:.3f} | {t2} | {moved} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="TRACES.json[:COST.json] for each temperature")
    ap.add_argument("--lambda0", type=float, default=None, help="report at this λ0 instead of the one fitted")
    ap.add_argument("--limit", type=int, default=None,
                    help="use only the first N prompts of each set (before the even/odd split)")
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 2:
        ap.error("--limit needs at least 2 prompts (one even, one odd)")
    sets = [Set(x, args.limit) for x in args.sets]
    fitted = fit_lambda(sets)
    lambda0 = fitted if args.lambda0 is None else args.lambda0
    print(f"λ0 fitted on the even prompts: {fitted:g}; reported at {lambda0:g}")
    out = {"lambda0_fitted": fitted, "lambda0": lambda0, "sets": {}}
    for s in sets:
        rows = held_out(s, lambda0)
        print_markdown(s, rows)
        out["sets"][s.label] = {"rows": rows, "cost_model": s.cost.to_json()}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
