"""What bounds costaware (issue 27 item 6): how far a policy that reads only the draft's signals can get.

costaware prices each window from one signal per drafted token, its
confidence, mapped through a calibration table to the chance the token is
accepted. The question is whether a better use of the signals (entropy as a
second one, a finer table, a bandit over its parameters) could reach the
oracle's throughput, or whether the signals themselves run out first. This
script scores, on the **odd** prompts of each trace file (the field table's
held-out rows), policies that are *told more than any live policy can know*:

* **told the signal** — before each step, the calibrated acceptance p_j of
  every token the window could draft (the confidences of tokens not drafted
  yet: clairvoyance on the signal, not on the verdict), from a table fitted
  in hindsight on the very prompts it is scored on; it drafts the window w
  maximising E[tokens] − R · seconds(w), the Bayes choice if tokens were
  accepted independently with those chances, and R (the price of a second)
  is the best of a grid, in hindsight too. Tables: the confidence bins
  costaware uses (`conf`); × 8 entropy bins (`conf×ent`, the peers' second
  signal); × the recent acceptance of *every* position, an EMA of weight 0.1
  over outcomes a live policy sees only for the tokens it drafted
  (`conf×recent`); the confidence table fitted on each prompt alone
  (`conf, per prompt`); and the last two again with every window ≥ 1 (`w ≥ 1`):
  the house keeps a drafted token, so a live policy cannot skip a step on
  its first token's signal, which it sees only once that token is drafted;
* **best fixed γ per prompt**: specdecode at the fastest γ for each prompt.

Every number is a share of the oracle on the odd prompts, priced by the
same cost model as the field table. A lookup trace has no confidence (a point
mass) and is skipped.

    .venv/bin/python benchmarks/signal_bound.py traces0.json:cost0.json traces07.json:cost07.json smol_int4.json
"""

from __future__ import annotations

import argparse
import bisect
import collections
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

from gammatune_tui.bench.sim import oracle, simulate as sim
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.oracle import WindowScript, step_options
from gammatune_tui.bench.sim.reference import best_fixed, longest_window
from gammatune_tui.engine.policies.confidence import bin_of
from gammatune_tui.engine.policies import DEFAULT_GAMMA0, PolicySettings

_spec = importlib.util.spec_from_file_location("policy_study", Path(__file__).with_name("policy_study.py"))
policy_study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(policy_study)

ENTROPY_EDGES = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)  # nats
RECENT_EDGES = (0.3, 0.5, 0.7, 0.85, 0.95)
RECENT_WEIGHT = 0.1
RATE_GRID = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)  # R as a fraction of the oracle's throughput
KINDS = ("conf", "conf×ent", "conf×recent")


def features(trace: Any, kind: str) -> list[Any]:
    """The table key of every position of the trace's path (the target's continuation)."""
    out, recent = [], 0.7
    for j in range(len(trace.tokens)):
        c = bin_of(trace.draft_prob[j])
        if kind == "conf":
            out.append(c)
        elif kind == "conf×ent":
            out.append((c, bisect.bisect_right(ENTROPY_EDGES, trace.draft_entropy[j])))
        else:
            out.append((c, bisect.bisect_right(RECENT_EDGES, recent)))
        recent = (1 - RECENT_WEIGHT) * recent + RECENT_WEIGHT * (trace.draft_ids[j] == trace.tokens[j])
    return out


def table(traces: Sequence[Any], kind: str) -> dict[Any, float]:
    """P(accepted | key) on these traces, with half a pseudo-count toward 1/2 in each cell."""
    cells: dict[Any, list[float]] = collections.defaultdict(lambda: [0.5, 1.0])
    for t in traces:
        for j, k in enumerate(features(t, kind)):
            cells[k][0] += t.draft_ids[j] == t.tokens[j]
            cells[k][1] += 1
    return {k: a / b for k, (a, b) in cells.items()}


def told_windows(trace: Any, p: Sequence[float], rate: float, cost: CostModel, cap: int, max_new: int,
                 min_window: int = 0) -> list[int]:
    """The windows of the policy told every p_j in advance: at each step the w maximising E[tokens] − rate · s(w)
    (w ≥ min_window where the budget leaves room)."""
    end, n, out = min(len(trace.tokens), max_new), 0, []
    while n < end:
        best, best_v = (0, 1), -math.inf
        options = step_options(trace, n, max(0, min(cap, max_new - n - 1)))
        for w, d, _a, new in [o for o in options if o[0] >= min_window] or options:
            tokens, alive = 1.0, 1.0
            for i in range(w):
                alive *= p[n + i] if n + i < len(p) else 0.0
                tokens += alive
            v = tokens - rate * (cost.step_s + d * cost.draft_token_s + cost.verify(d + 1))
            if v > best_v:
                best_v, best = v, (w, new)
        out.append(best[0])
        n += best[1]
    return out


def _thr(recs: Sequence[Any]) -> float:
    return sum(r.tokens for r in recs) / sum(r.wall_s for r in recs)


class Set:
    """The odd prompts of one trace file, its cost model and its oracle."""

    def __init__(self, spec: str):
        path, _, cost_path = spec.partition(":")
        traces, cost, _passes, data = policy_study.load(Path(path))
        if cost_path:
            cost = CostModel.from_json(json.loads(Path(cost_path).read_text(encoding="utf-8"))["cost_model"])
        self.name, self.cost, self.odd = Path(path).name, cost, traces[1::2]
        self.max_new = min(t.max_new_tokens for t in self.odd)
        self.cap = longest_window(self.odd)
        self.oracle = _thr([oracle.oracle_run(t, cost, self.max_new).record for t in self.odd])
        sampling = data["key"].get("sampling")
        self.label = f"T = {sampling['temperature']:g}" if isinstance(sampling, dict) else "T = 0"

    def share(self, recs: Sequence[Any]) -> float:
        return _thr(recs) / self.oracle

    def method(self, name: str) -> float:
        return self.share([sim.play_trace(t, PolicySettings.build(name, DEFAULT_GAMMA0).make(), self.max_new, self.cost)
                           for t in self.odd])

    def per_prompt_fixed(self) -> float:
        return self.share([best_fixed([t], self.cost, self.max_new, self.cap)[1][0] for t in self.odd])

    def told(self, kind: str, per_prompt: bool = False, min_window: int = 0) -> float:
        if per_prompt:
            ps = [[tab.get(k, 0.5) for k in features(t, kind)] for t in self.odd for tab in [table([t], kind)]]
        else:
            tab = table(self.odd, kind)
            ps = [[tab.get(k, 0.5) for k in features(t, kind)] for t in self.odd]
        return max(self.share([sim.play_trace(t, WindowScript(told_windows(t, p, f * self.oracle, self.cost, self.cap,
                                                                          self.max_new, min_window)),
                                                 self.max_new, self.cost)
                               for t, p in zip(self.odd, ps)]) for f in RATE_GRID)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="TRACES.json[:COST.json]: a draft model's traces (lookup ones are skipped)")
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    args = ap.parse_args(argv)
    cols = ["costaware", "best fixed γ per prompt", *(f"told {k}" for k in KINDS), "told conf, per prompt",
            "told conf×recent, w ≥ 1", "told conf, per prompt, w ≥ 1"]
    print("| traces | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    out: dict[str, dict[str, float]] = {}
    for spec in args.sets:
        s = Set(spec)
        if not hasattr(s.odd[0], "draft_prob"):
            print(f"| {s.name} | skipped: a lookup trace has no confidence |")
            continue
        row = {"costaware": s.method("costaware"), "best fixed γ per prompt": s.per_prompt_fixed(),
               **{f"told {k}": s.told(k) for k in KINDS}, "told conf, per prompt": s.told("conf", per_prompt=True),
               "told conf×recent, w ≥ 1": s.told("conf×recent", min_window=1),
               "told conf, per prompt, w ≥ 1": s.told("conf", per_prompt=True, min_window=1)}
        out[f"{s.name} ({s.label})"] = row
        print(f"| {s.name} ({s.label}) | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
