"""`gammatune bench --simulate`: record a trace per prompt, time the decoder, play every policy from the traces.

Traces and the cost model can be saved and reused (`--traces`); a few cells
are checked against live runs step by step (`--check-live`), or the whole
sweep is run live too and compared cell by cell (`--validate`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...engine.draft_sources import pair_drafter
from ...engine.policies import PolicyParams, PolicySettings
from ...engine.text_pieces import prompt_pieces
from ...errors import InvalidParameter
from .. import protocol, report
from .. import simulate as sim
from ..cost_model import CALIBRATION_GAMMAS, CostModel, calibrate
from ..lookup_trace import record_lookup_trace, trace_from_json
from ..results import aggregate, throughputs
from ..tune import GRID
from .common import progress_bar
from .live import live_cells, run_live
from .tune import run_tune


@dataclass(frozen=True)
class SimulateOptions:
    """What `--simulate` was asked to do beside the simulated sweep."""

    traces_path: Path | None = None    # reuse the traces and cost model saved there, or save them there
    check_live: int = 1                # prompts also run live and compared step by step
    validate: bool = False             # run the whole sweep live too and compare cell by cell
    tune_method: str | None = None     # --tune: the policy whose parameters to search
    std_weight: float = 1.0            # --tune score: mean − this × std across γ0


def run_simulate(console: Console, err: Console, pair: Any, pid: list, cfg: Any, label: str, payload: dict,
                 out: Path, opts: SimulateOptions) -> list[dict[str, Any]]:
    """The simulated sweep (report on `console`, everything into `payload`), then the checks and tuning asked for."""
    tune_ = opts.tune_method is not None
    # the longest window a policy may plan: γ0, or γ_max for the GammaTune policies (whose γ_min may exceed γ0)
    gamma_max = PolicyParams.build(**cfg.params).gamma_max
    max_window = max(max(cfg.gammas), gamma_max, max(GRID["gamma_max"]) if tune_ else 0)
    traces, cost = _load_or_record(err, pair, pid, cfg, max_window, opts.traces_path)
    payload["sim_setup"] = {
        "cost_model": cost.to_json(),
        "traces": [{"prompt_id": t.prompt_id, "tokens": len(t.tokens), "ended_eos": t.ended_eos,
                    "draft_agreement": (sum(a == b for a, b in zip(t.draft_ids, t.tokens)) / len(t.tokens)) if t.tokens else 0.0,
                    "target_flips": t.target_flips, "fragile_positions": t.fragile} for t in traces],
    }
    flips = sum(len(t.target_flips) for t in traces)
    fragile = sum(t.fragile for t in traces)
    if flips or fragile:
        err.print(Text(f"note: {flips} position(s) where a teacher-forced target pass disagrees with cached decoding, "
                       f"{fragile} near-tie position(s); a live run may diverge there", style="yellow"))

    t0 = time.perf_counter()
    records = sim.simulate_sweep(traces, cfg.methods, cfg.gammas, cost, cfg.params)
    sweep_s = time.perf_counter() - t0
    records += sim.plain_records(traces)
    cells = aggregate(records)
    derived = report.print_report(console, cells, cfg.gammas, label, title="Table 2 (simulated)")
    console.print(Text(f"simulated {len(cfg.methods)} methods × {len(cfg.gammas)} γ0 × {len(traces)} prompts "
                       f"in {sweep_s:.2f} s", style="bold"))
    payload["sim"] = {"records": [r.to_json() for r in records], "cells": [c.to_json() for c in cells.values()],
                      "derived": derived, "sweep_s": sweep_s}
    rows = report.write_csv(report.csv_path_for(out), cells, "sim")

    if opts.check_live:
        n = opts.check_live
        payload["live_check"] = _check_live(console, err, pair, pid[:n], traces[:n], cfg, cost)
    if opts.validate:
        rows = run_live(console, err, pair, pid, cfg, label, payload, out)
        rows = report.write_csv(report.csv_path_for(out), cells, "sim", rows)
        payload["validation"] = _compare_cells(console, cells, live_cells(payload))
    if opts.tune_method is not None:
        payload["tune"] = run_tune(console, err, traces, cost, cfg, opts.tune_method, opts.std_weight)
    return rows


def _load_or_record(err: Console, pair: Any, pid: list, cfg: Any, max_window: int, traces_path: Path | None):
    key = {"target": str(pair.name_target), "draft": str(pair.name_draft), "device": str(pair.device),
           "dtype": str(pair.dtype), "prompts": [[p.id, p.ids] for p in pid], "max_new_tokens": cfg.max_new_tokens}
    drafter = pair_drafter(pair)
    if drafter.model_free:  # prompt lookup: its own kind of trace, for these n-gram sizes
        key["drafter"] = {"name": drafter.name, **drafter.params()}
    if traces_path is not None and traces_path.exists():
        try:
            data = json.loads(traces_path.read_text(encoding="utf-8"))
            ok = data.get("key") == key and data.get("max_window", 0) >= max_window
            if ok:
                traces = [trace_from_json(t) for t in data["traces"]]
                err.print(Text(f"using the traces in {traces_path}"))
                return traces, CostModel.from_json(data["cost_model"])
            err.print(Text(f"{traces_path} was recorded for other models, prompts or windows; recording again",
                           style="yellow"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InvalidParameter(f"--traces {traces_path}: unreadable trace file ({exc})") from None
    traces = []
    with progress_bar(err) as prog:
        task = prog.add_task("recording traces", total=len(pid) + 2)
        protocol.warm_up(pair, pid[0], protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                                baselines=()))
        for p in pid:
            t0 = time.perf_counter()
            prompt_pieces(pair.tokenizer, p.ids)
            header_s = time.perf_counter() - t0
            if drafter.model_free:
                traces.append(record_lookup_trace(pair, p.id, p.ids, cfg.max_new_tokens, max_window, pair.eos_ids,
                                                  drafter.ngram_min, drafter.ngram_max, header_s))
            else:
                traces.append(sim.record_trace(pair, p.id, p.ids, cfg.max_new_tokens, max_window - 1, pair.eos_ids,
                                               header_s))
            prog.update(task, advance=1, description=f"trace {p.id}")
        # the timing pass: the decoder itself, specdecode at several windows on the first prompt
        prog.update(task, description="timing the decoder")
        events: list = []
        for g in CALIBRATION_GAMMAS:
            if g <= max_window:
                protocol.run_policy(pair, PolicySettings.build("specdecode", g), pid[0], cfg.max_new_tokens,
                                    keep_events=events)
        cost = calibrate(events)
        cost.session_s = max(0.0, cost.outside_s - traces[0].session_s)
        prog.update(task, advance=2)
    if traces_path is not None:
        traces_path.parent.mkdir(parents=True, exist_ok=True)
        traces_path.write_text(json.dumps({"key": key, "max_window": max_window, "cost_model": cost.to_json(),
                                           "traces": [t.to_json() for t in traces]}), encoding="utf-8")
        err.print(Text(f"saved traces to {traces_path}"))
    return traces, cost


def _check_live(console: Console, err: Console, pair: Any, pid: list, traces: list, cfg: Any, cost: Any) -> dict:
    """Every method at a few γ0, live vs simulated, step by step (γ, drafted, accepted, emitted)."""
    gs = sorted({cfg.gammas[0], cfg.gammas[len(cfg.gammas) // 2], cfg.gammas[-1]})
    checks = []
    with progress_bar(err) as prog:
        task = prog.add_task("live check", total=len(pid) * len(cfg.methods) * len(gs))
        for p, t in zip(pid, traces):
            for m in cfg.methods:
                for g in gs:
                    s = PolicySettings.build(m, g, **cfg.params)
                    events: list = []
                    protocol.run_policy(pair, s, p, cfg.max_new_tokens, keep_events=events)
                    checks.append(sim.check_against_live(t, s, events, cost, cfg.max_new_tokens))
                    prog.update(task, advance=1)
    table = Table(title=Text("Simulator vs live (same prompt, policy, γ0)"), title_justify="left")
    for c in ("method", "γ0", "prompt", "steps equal", "output equal", "live tok/s", "sim tok/s", "sim/live"):
        table.add_column(c, justify="left" if c in ("method", "prompt") else "right", no_wrap=c == "method")
    for c in checks:
        table.add_row(Text(c.method), Text(str(c.gamma0)), Text(c.prompt_id),
                      Text("yes" if c.steps_equal else f"no (step {c.first_difference})", style="" if c.steps_equal else "red"),
                      Text("yes" if c.output_equal else "no"),
                      Text(f"{c.live_tokens / c.live_s:.1f}" if c.live_s else "—"),
                      Text(f"{c.sim_tokens / c.sim_s:.1f}" if c.sim_s else "—"), Text(f"{c.ratio:.3f}"))
    console.print(table)
    exact = sum(c.steps_equal for c in checks)
    ratios = [c.ratio for c in checks if not math.isnan(c.ratio)]
    mean_abs = sum(abs(r - 1) for r in ratios) / len(ratios) if ratios else math.nan
    console.print(Text(f"step-exact: {exact}/{len(checks)}; simulated tok/s within "
                       f"{max((abs(r - 1) for r in ratios), default=math.nan):.1%} of live at worst, "
                       f"{mean_abs:.1%} on average", style="bold"))
    return {"checks": [c.to_json() for c in checks], "step_exact": exact, "total": len(checks),
            "mean_abs_rel_error": mean_abs}


def _compare_cells(console: Console, sim_cells: dict, live_cells: dict) -> dict:
    rows = []
    table = Table(title=Text("Simulated vs live throughput per (method, γ0)"), title_justify="left")
    for c in ("method", "γ0", "live tok/s", "sim tok/s", "sim/live", "steps live", "steps sim"):
        table.add_column(c, justify="left" if c == "method" else "right", no_wrap=c == "method")
    for key, lc in live_cells.items():
        sc = sim_cells.get(key)
        if sc is None:
            continue
        r = sc.throughput / lc.throughput if lc.throughput else math.nan
        rows.append({"method": key[0], "gamma0": key[1], "live": lc.throughput, "sim": sc.throughput, "ratio": r,
                     "steps_live": lc.steps, "steps_sim": sc.steps})
        table.add_row(Text(key[0]), Text("—" if key[1] is None else str(key[1])), Text(f"{lc.throughput:.1f}"),
                      Text(f"{sc.throughput:.1f}"), Text(f"{r:.3f}"), Text(str(lc.steps)), Text(str(sc.steps)))
    console.print(table)
    ratios = [r["ratio"] for r in rows if not math.isnan(r["ratio"])]
    worst = max((abs(r - 1) for r in ratios), default=math.nan)
    mean_abs = sum(abs(r - 1) for r in ratios) / len(ratios) if ratios else math.nan
    steps_eq = sum(r["steps_live"] == r["steps_sim"] for r in rows)
    console.print(Text(f"simulation vs live: mean |error| {mean_abs:.1%}, worst {worst:.1%}; "
                       f"step counts equal in {steps_eq}/{len(rows)} cells", style="bold"))
    out = {"cells": rows, "mean_abs_rel_error": mean_abs, "worst_abs_rel_error": worst, "steps_equal": steps_eq}
    # Table 2 is a ratio within one run, so a machine that is uniformly slower or faster than during the
    # timing pass cancels out there: compare the two Table 2s as well.
    ts, tl = throughputs(sim_cells), throughputs(live_cells)
    if "specdecode" in ts and "specdecode" in tl:
        a, b = report.table2(ts), report.table2(tl)
        t = Table(title=Text("Table 2, simulated vs live"), title_justify="left")
        for c in ("method", "simulated", "live"):
            t.add_column(c, justify="left" if c == "method" else "right", no_wrap=c == "method")
        cmp = {}
        for m in a:
            if m in b:
                t.add_row(Text(m), Text(str(a[m])), Text(str(b[m])))
                cmp[m] = {"sim": a[m].to_json(), "live": b[m].to_json()}
        console.print(t)
        out["table2"] = cmp
    return out
