"""costaware's own knobs and the peers' second signal, fitted on the even prompts, reported on the odd (issue 27 item 6).

The issue asks whether what the peers teach improves costaware: entropy as a
second confidence signal (AdaEDL, SVIP), or a bandit over its own
parameters (BanditSpec). A bandit can only win where some setting does, so
this script asks the question directly, on the same trace files as the field
table. Each variant's setting is chosen on the **even** prompts of every
file together (the highest mean share of the oracle, γ0 = 4), then played
on the **odd** ones beside shipped costaware, with the paired gap's standard
error over the odd prompts (a gap inside ±2 SE is no gain):

* `calibration`: `calib_weight` × `calib_forget` over a grid (the shipped
  5 / 0.95 is in it);
* `price ×κ`: the renewal rule's price of a second scaled by κ (κ = 1 is the
  rule; below 1 it drafts longer, above shorter);
* `+ entropy`: the calibration table split by the drafted token's entropy
  H (nats): a cell (confidence bin, entropy band) starts from costaware's
  own table for that confidence, with `w2` pseudo-counts, and learns online
  with the same forgetting;
* `+ recent acceptance`: the same split by band of an EMA (weight `alpha`)
  of the session's labelled tokens' verdicts, the signal signal_bound.py
  finds worth most when told in advance.

    .venv/bin/python benchmarks/costaware_variants.py traces0.json:cost0.json traces07.json:cost07.json smol_int4.json smol_lookup.json
"""

from __future__ import annotations

import argparse
import bisect
import importlib.util
import itertools
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from gammatune_tui.bench.sim import oracle, simulate as sim
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.engine.policies.confidence import bin_of
from gammatune_tui.engine.policies.costaware import CostAwareState
from gammatune_tui.engine.policies.costaware_policy import CostAware
from gammatune_tui.engine.policies import DEFAULT_GAMMA0, PolicySettings
from gammatune_tui.engine.policies.policy_base import TokenStats, check_update

_spec = importlib.util.spec_from_file_location("policy_study", Path(__file__).with_name("policy_study.py"))
policy_study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(policy_study)

CALIBRATION = [{"calib_weight": w, "calib_forget": f} for w in (1, 2, 5, 10, 20) for f in (0.7, 0.8, 0.9, 0.95, 0.98, 1)]
KAPPAS = [{"kappa": k} for k in (0.7, 0.8, 0.9, 1.0, 1.1, 1.25)]
ENTROPY = [{"w2": w, "edges": e} for w in (1, 3, 10) for e in ((1.0,), (2.0,), (3.0,), (2.0, 4.0), (0.5, 1.5, 3.0))]
RECENT = [{"w2": w, "edges": e, "alpha": a} for w in (1, 3, 10) for e in ((0.5,), (0.4, 0.7), (0.3, 0.5, 0.7, 0.85))
          for a in (0.1, 0.2, 0.3)]


class _Scaled(CostAwareState):
    kappa: float = 1.0

    def priced(self) -> dict[int, float]:
        if self._prices is None:
            self._prices = {k: v * self.kappa for k, v in super().priced().items()}
        return self._prices


class _EntropyTable:
    """costaware's table split by entropy band: each cell shrinks to the confidence bin's own acceptance."""

    def __init__(self, base: Any, w2: float, edges: Sequence[float]):
        self.base, self.w2, self.edges, self.forget = base, w2, tuple(edges), base.forget
        self.hits: dict[Any, float] = {}
        self.seen: dict[Any, float] = {}

    def _key(self, stat: tuple[float, float]) -> tuple[int, int]:
        h = stat[1] if not math.isnan(stat[1]) else 0.0
        return bin_of(stat[0]), bisect.bisect_right(self.edges, h)

    def accept(self, stat: tuple[float, float]) -> float:
        k = self._key(stat)
        return (self.w2 * self.base.accept(stat[0]) + self.hits.get(k, 0.0)) / (self.w2 + self.seen.get(k, 0.0))

    def mean(self) -> float:
        return self.base.mean()

    def best(self) -> float:
        return 1.0  # a cell may promise more than any bin of the base table: plan() then bounds nothing

    def learn(self, stats: list[tuple[float, float]], accepted: int, drafted: int) -> None:
        f = self.forget
        self.hits = {k: v * f for k, v in self.hits.items()}
        self.seen = {k: v * f for k, v in self.seen.items()}
        for i in range(min(len(stats), drafted, accepted + 1)):
            k = self._key(stats[i])
            self.seen[k] = self.seen.get(k, 0.0) + 1.0
            self.hits[k] = self.hits.get(k, 0.0) + (1.0 if i < accepted else 0.0)
        self.base.learn([c for c, _ in stats], accepted, drafted)


class _RecentTable(_EntropyTable):
    """The table split by the band of the recent acceptance (an EMA over every labelled token's verdict)."""

    def __init__(self, base: Any, w2: float, edges: Sequence[float], alpha: float):
        super().__init__(base, w2, edges)
        self.alpha, self.recent = alpha, base.mean()

    def _key(self, stat: tuple[float, float]) -> tuple[int, int]:
        return bin_of(stat[0]), bisect.bisect_right(self.edges, self.recent)

    def learn(self, stats: list[tuple[float, float]], accepted: int, drafted: int) -> None:
        super().learn(stats, accepted, drafted)
        for i in range(min(len(stats), drafted, accepted + 1)):
            self.recent = (1 - self.alpha) * self.recent + self.alpha * (1.0 if i < accepted else 0.0)


class _WithEntropy(CostAware):
    def keep_drafting(self, top_prob: float, chosen_prob: float, entropy: float,
                      earlier: Sequence[TokenStats] = ()) -> bool:
        return self.state.keep([(t.chosen, t.entropy) for t in earlier] + [(chosen_prob, entropy)])

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        check_update(accepted, drafted)
        self.state.update(accepted, drafted, [(t.chosen, t.entropy) for t in window])
        self.gamma = self.state.plan(self.params.gamma_min, self.params.gamma_max)


def make(variant: str, setting: dict[str, Any]) -> Callable[[], Any]:
    """A fresh policy of the variant at this setting (a new one per prompt, as a session starts)."""
    def build() -> Any:
        if variant in ("shipped", "calibration"):
            return PolicySettings.build("costaware", DEFAULT_GAMMA0, **setting).make()
        base = PolicySettings.build("costaware", DEFAULT_GAMMA0).make()
        if variant == "price ×κ":
            base.state.__class__ = _Scaled
            base.state.kappa = float(setting["kappa"])
            return base
        p = _WithEntropy(DEFAULT_GAMMA0, base.params)
        if variant == "+ recent acceptance":
            p.state.calibration = _RecentTable(p.state.calibration, setting["w2"], setting["edges"], setting["alpha"])
        else:
            p.state.calibration = _EntropyTable(p.state.calibration, setting["w2"], setting["edges"])
        return p
    return build


class Set:
    def __init__(self, spec: str):
        path, _, cost_path = spec.partition(":")
        traces, cost, _p, data = policy_study.load(Path(path))
        if cost_path:
            cost = CostModel.from_json(json.loads(Path(cost_path).read_text(encoding="utf-8"))["cost_model"])
        sampling = data["key"].get("sampling")
        self.label = f"{Path(path).name} (T = {sampling['temperature']:g})" if isinstance(sampling, dict) \
            else f"{Path(path).name} (T = 0)"
        self.cost, self.even, self.odd = cost, traces[0::2], traces[1::2]
        self.max_new = min(t.max_new_tokens for t in self.odd)
        self.orc = {id(t): oracle.oracle_run(t, cost, None if t in self.even else self.max_new).record
                    for t in (*self.even, *self.odd)}

    def shares(self, build: Callable[[], Any], part: str) -> tuple[float, list[float]]:
        """The share of the oracle over the part's prompts together, and each prompt's."""
        traces = self.even if part == "even" else self.odd
        recs = [sim.play_trace(t, build(), None if part == "even" else self.max_new, self.cost) for t in traces]
        thr = lambda rs: sum(r.tokens for r in rs) / sum(r.wall_s for r in rs)  # noqa: E731
        orcs = [self.orc[id(t)] for t in traces]
        return thr(recs) / thr(orcs), [thr([r]) / thr([o]) for r, o in zip(recs, orcs)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="TRACES.json[:COST.json] (draft-model or prompt-lookup traces)")
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    args = ap.parse_args(argv)
    sets = [Set(s) for s in args.sets]
    shipped = {s.label: s.shares(make("shipped", {}), "odd") for s in sets}
    out: dict[str, Any] = {"shipped": {k: v[0] for k, v in shipped.items()}, "variants": {}}
    print("| variant | fitted on the even prompts | " + " | ".join(s.label for s in sets) + " |")
    print("|---|---|" + "---:|" * len(sets))
    print("| costaware as shipped | calib_weight 5, calib_forget 0.95 | "
          + " | ".join(f"{shipped[s.label][0]:.3f}" for s in sets) + " |")
    for variant, grid in (("calibration", CALIBRATION), ("price ×κ", KAPPAS), ("+ entropy", ENTROPY),
                          ("+ recent acceptance", RECENT)):
        best = max(grid, key=lambda g: statistics.fmean(s.shares(make(variant, g), "even")[0] for s in sets))
        cells, rec = [], {}
        for s in sets:
            share, per = s.shares(make(variant, best), "odd")
            gaps = [a - b for a, b in zip(per, shipped[s.label][1])]
            se = statistics.pstdev(gaps) / math.sqrt(len(gaps)) if len(gaps) > 1 else 0.0
            cells.append(f"{share:.3f} ({share - shipped[s.label][0]:+.3f} ± {2 * se:.3f})")
            rec[s.label] = {"share": share, "gap": share - shipped[s.label][0], "gap_2se": 2 * se}
        out["variants"][variant] = {"setting": {k: list(v) if isinstance(v, tuple) else v for k, v in best.items()},
                                    "odd": rec}
        print(f"| {variant} | {', '.join(f'{k} {v}' for k, v in best.items())} | " + " | ".join(cells) + " |",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
