"""`gammatune bench --tune`: search a policy's parameters on the traces (`tune.tuned_names`); recommend only what wins held out."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...engine.policies.param_specs import PARAM_SPECS
from ..sim import reference
from ..sim import tune as tn
from ..report.shares import print_shares
from ..live.protocol import SweepConfig
from ..sim.cost_model import CostModel
from .common import progress_bar

HEADERS = {s.name: s.header for s in PARAM_SPECS}


def _value(v: object) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def run_tune(console: Console, err: Console, traces: list, cost: CostModel, cfg: SweepConfig, method: str, std_weight: float,
             passes: Sequence[Any] = ()) -> dict:
    with progress_bar(err) as prog:
        task = prog.add_task(f"tuning {method}", total=None)
        best, start, scored, secs = tn.tune(traces, cost, cfg.gammas, method, start=dict(cfg.params),
                                            std_weight=std_weight, max_new_tokens=cfg.max_new_tokens,
                                            progress=lambda n: prog.update(task, advance=n))
    top = sorted(scored, key=lambda s: -s.score)[:8]
    names = tn.tuned_names(method)
    table = Table(title=Text(f"--tune {method}: simulated speedup over specdecode across γ0 "
                             f"(score = mean − {std_weight:g}·std)"), title_justify="left")
    for c in ("", *(HEADERS[n] for n in names), "mean", "std", "score"):
        table.add_column(c, justify="left" if c == "" else "right")

    def row(tag: str, s: tn.Score) -> None:
        table.add_row(Text(tag), *(Text(_value(s.params[n])) for n in names), Text(f"{s.mean:.3f}"),
                      Text(f"{s.std:.3f}"), Text(f"{s.score:.3f}"))

    start_tag = "your settings" if any(n in cfg.params for n in names) else "current defaults"
    row(start_tag, start)
    for i, s in enumerate(top):
        row("best" if i == 0 else f"#{i + 1}", s)
    console.print(table)
    gain = best.mean / start.mean - 1 if start.mean else math.nan
    flags = " ".join(f"--{n.replace('_', '-')} {_value(best.params[n])}" for n in names)
    console.print(Text(f"best: {flags}  ({best.mean:.3f} ± {best.std:.3f}× vs {start_tag} {start.mean:.3f} ± "
                       f"{start.std:.3f}×, {gain:+.1%} mean; {len(scored)} candidates in {secs:.1f} s)", style="bold"))
    result: dict[str, Any] = {"method": method, "std_weight": std_weight, "best": best.to_json(), "start": start.to_json(),
              "candidates": [s.to_json() for s in scored], "seconds": secs}
    if len(traces) >= 4:
        # Over-fitting check: tune on every other prompt, score on the rest.
        fit, held = traces[0::2], traces[1::2]
        with progress_bar(err) as prog:
            task = prog.add_task("held-out check", total=None)
            best_fit, _, _, _ = tn.tune(fit, cost, cfg.gammas, method, start=dict(cfg.params), std_weight=std_weight,
                                        max_new_tokens=cfg.max_new_tokens,
                                        progress=lambda n: prog.update(task, advance=n))
        base = statistics.fmean(tn.throughput(held, "specdecode", g, {}, cost, cfg.max_new_tokens) for g in cfg.gammas)
        h_best = tn.score(held, method, cfg.gammas, best_fit.params, cost, base, std_weight, cfg.max_new_tokens)
        h_def = tn.score(held, method, cfg.gammas, start.params, cost, base, std_weight, cfg.max_new_tokens)
        console.print(Text(f"held-out check (tuned on {len(fit)} prompts, scored on the other {len(held)}): "
                           f"tuned {h_best.mean:.3f} ± {h_best.std:.3f}× vs {start_tag} {h_def.mean:.3f} ± {h_def.std:.3f}×"))
        result["held_out"] = {"fit_prompts": [t.prompt_id for t in fit], "tuned_on_fit": best_fit.to_json(),
                              "held_out_tuned": h_best.to_json(), "held_out_defaults": h_def.to_json()}
    # the tuned and the starting settings beside the reference rows, as shares of the oracle with their spread
    if len(traces) >= 4:
        entries = [(f"{method}, tuned on the others", method, best_fit.params), (f"{method}, {start_tag}", method,
                                                                                   start.params)]
        on, where = held, f"held out: scored on the {len(held)} prompts not tuned on"
    else:
        entries = [(f"{method}, tuned", method, best.params), (f"{method}, {start_tag}", method, start.params)]
        on, where = traces, f"all {len(traces)} prompts (too few to hold any out)"
    rows = reference.share_rows(on, cost, passes, entries, cfg.gammas, max_new=cfg.max_new_tokens)
    print_shares(console, rows, f"--tune {method} beside the reference rows ({where})", len(passes))
    result["shares"] = {"prompts": [t.prompt_id for t in on], "rows": [r.to_json() for r in rows]}
    verdict = recommend(method, best, start, result.get("held_out"))
    console.print(Text(verdict.line, style="bold" if verdict.kind == "tuned" else "bold yellow"))
    result["recommended"] = {"kind": verdict.kind, "params": verdict.params, "flags": verdict.flags}
    return result


@dataclass(frozen=True)
class Recommendation:
    kind: str                 # "tuned", "defaults" (the tuned settings lost, or are the defaults) or "unchecked"
    params: dict[str, Any]
    flags: str
    line: str


def recommend(method: str, best: tn.Score, start: tn.Score, held_out: dict[str, Any] | None) -> Recommendation:
    """What to use: the tuned settings only when they also win on prompts they were not tuned on."""
    names = tn.tuned_names(method)

    def flags(params: dict[str, Any]) -> str:
        return " ".join(f"--{n.replace('_', '-')} {params[n]:g}" if isinstance(params[n], float)
                        else f"--{n.replace('_', '-')} {params[n]}" for n in names)

    if all(best.params[n] == start.params[n] for n in names):
        return Recommendation("defaults", dict(start.params), "",
                              "recommended: the defaults (no setting searched scores higher on these traces)")
    if held_out is None:
        return Recommendation("unchecked", dict(best.params), flags(best.params),
                              f"recommended, unchecked: {flags(best.params)} (the held-out check needs 4 or more "
                              "prompts; with fewer, a tuned setting may only fit these prompts)")
    tuned, default = held_out["held_out_tuned"], held_out["held_out_defaults"]
    if tuned["score"] > default["score"]:
        return Recommendation("tuned", dict(best.params), flags(best.params),
                              f"recommended: {flags(best.params)} (it also wins on the held-out prompts: score "
                              f"{tuned['score']:.3f} vs {default['score']:.3f})")
    return Recommendation("defaults", dict(start.params), "",
                          f"recommended: the defaults — tuning loses on its own held-out check (score "
                          f"{tuned['score']:.3f} tuned vs {default['score']:.3f} defaults on the prompts it was not "
                          "tuned on), so the gain above is fitting these prompts, not a better setting")
