"""`gammatune bench --simulate`: record a trace per prompt, time the decoder, play every policy from the traces.

Traces and the cost model are kept in the user's cache (`trace_cache.py`)
and reused while nothing they depend on changes (`--refresh-traces` records
them again, `--traces FILE` keeps them in a file); a few cells are checked
against live runs step by step (`--check-live`), or the whole sweep is run
live too and compared cell by cell (`--validate`).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...engine.common.pair import ModelPair
from ...engine.policies import PolicyParams, PolicySettings
from ...engine.common.sampling_config import SEED_MAX
from ...errors import Interrupted
from ..sim import oracle, reference
from ..live import protocol
from ..report import files
from ..report import tables as report
from ..report.shares import print_shares
from ..sim import simulate as sim
from ..sim.cost_model import CostModel
from ..sim.replays import Replays
from ..results import aggregate, throughputs
from ..sim.tune import GRID
from .common import progress_bar
from .live import live_cells, run_live
from .pass_sessions import PassSessions
from .trace_cache import TraceSet, load_or_record
from .tune import run_tune


@dataclass(frozen=True)
class SimulateOptions:
    """What `--simulate` was asked to do beside the simulated sweep."""

    traces_path: Path | None = None    # keep the traces and cost model there instead of in the user's cache
    check_live: int | None = None      # prompts also run live and compared step by step (None: 1, 0 when cached)
    validate: bool = False             # run the whole sweep live too and compare cell by cell
    tune_method: str | None = None     # --tune: the policy whose parameters to search
    std_weight: float = 1.0            # --tune score: mean − this × std across γ0
    refresh: bool = False              # record the traces again even when cached
    engines: tuple = ()                # --for: bench/deploy/engines.py rows to play the traces under
    costs: tuple[float, float] | None = None   # --costs: (draft ms, verify ms) for --for instead of the measured


def run_simulate(console: Console, err: Console, pair: ModelPair, pid: list, cfg: protocol.SweepConfig, label: str, payload: dict,
                 out: Path, opts: SimulateOptions, categories: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The simulated sweep (report on `console`, everything into `payload`), then the checks and tuning asked for.

    The oracle (bench/sim/oracle.py) is played on the same traces: Table 2's top
    row, and every method's share of it overall and per prompt category
    (`categories`: prompt id → category).
    """
    tune_ = opts.tune_method is not None
    # the longest window a policy may plan: γ0, or γ_max for the GammaTune policies (whose γ_min may exceed γ0)
    gamma_max = PolicyParams.build(**cfg.params).gamma_max
    max_window = max(max(cfg.gammas), gamma_max, max(GRID["gamma_max"]) if tune_ else 0)
    try:
        found = load_or_record(err, pair, pid, cfg.max_new_tokens, max_window, opts.traces_path, opts.refresh,
                               cfg.sampling)
    except Interrupted as exc:   # Ctrl+C while recording or timing: what was kept, and that `out` was not written
        raise Interrupted(f"{exc}; {out} not written") from None
    try:
        return _after_traces(console, err, pair, pid, cfg, label, payload, out, opts, categories, found)
    except KeyboardInterrupt:
        kept = (f"the traces and cost model stay in {found.path} (the next --simulate reuses them)" if found.path
                else "the traces could not be kept")
        raise Interrupted(f"{kept}; {out} not written") from None


def _after_traces(console: Console, err: Console, pair: ModelPair, pid: list, cfg: protocol.SweepConfig, label: str, payload: dict,
                  out: Path, opts: SimulateOptions, categories: dict[str, str] | None, found: TraceSet
                  ) -> list[dict[str, Any]]:
    """The simulated sweep, the oracle and shares, then the live check, --validate and --tune, on `found`."""
    traces, cost = found.traces, found.cost
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
    # the timing passes' cost-planning sessions, played on the second core meanwhile (pass_sessions.py: same numbers)
    pass_sessions = PassSessions(traces, found.passes, cfg.methods, cfg.gammas, cfg.params, cfg.max_new_tokens)
    try:
        return _played(console, err, pair, pid, cfg, label, payload, out, opts, categories, found, t0, pass_sessions)
    finally:
        pass_sessions.close()


def _played(console: Console, err: Console, pair: ModelPair, pid: list, cfg: protocol.SweepConfig, label: str, payload: dict,
            out: Path, opts: SimulateOptions, categories: dict[str, str] | None, found: TraceSet, t0: float,
            pass_sessions: PassSessions) -> list[dict[str, Any]]:
    """The sweep, oracle and shares (the passes' cost-planning sessions from `pass_sessions`), then the checks."""
    traces, cost = found.traces, found.cost
    replays = Replays()  # the sweep's sessions, priced again for the shares below (exact: bench/sim/replays.py)
    records = sim.simulate_sweep(traces, cfg.methods, cfg.gammas, cost, cfg.params, replays=replays)
    sweep_s = time.perf_counter() - t0
    records += sim.plain_records(traces, cost=cost)
    # the hindsight-optimal γ on the same traces and cost model: Table 2's top row and each method's share of it
    runs = [oracle.oracle_run(t, cost, cfg.max_new_tokens) for t in traces]
    orecs = [r.record for r in runs]
    regret = oracle.regret(records, orecs, categories)
    records += orecs
    cells = aggregate(records)
    derived = report.print_report(console, cells, cfg.gammas, label, title="Table 2 (simulated)" + ("" if cfg.sampling.greedy else f", {_law(cfg)}"),
                                  regret=regret)
    summary = oracle.summarize(traces, runs, cost)
    console.print(report.render_oracle(summary, sum(w == 0 for r in runs for w in r.windows)))
    t1 = time.perf_counter()
    pass_sessions.fill(replays)
    shares = reference.share_rows(traces, cost, found.passes, cfg.methods, cfg.gammas, cfg.params,
                                  cfg.max_new_tokens, replays=replays)
    print_shares(console, shares, f"Share of the oracle, with the reference rows ({_law(cfg)})", len(found.passes))
    sweep_s += time.perf_counter() - t1
    console.print(Text(f"simulated {len(cfg.methods)} methods × {len(cfg.gammas)} γ0 × {len(traces)} prompts "
                       f"in {sweep_s:.2f} s", style="bold"))
    payload["sim"] = {"records": [r.to_json() for r in records], "cells": [c.to_json() for c in cells.values()],
                      "derived": derived, "sweep_s": sweep_s, "sampling": cfg.sampling.to_json(),
                      "shares": [r.to_json() for r in shares], "timing_passes": len(found.passes),
                      "oracle": {**summary.to_json(), "windows": {r.prompt_id: r.windows for r in runs}}}
    rows = files.write_csv(files.csv_path_for(out), cells, "sim")
    if opts.engines:
        payload["deploy"] = _deploy(console, pair, traces, found, cfg, opts)

    # the live check runs on traces recorded now; cached ones were recorded the same way (--check-live N to rerun)
    # (shipped traces are checked against a fresh recording by the test suite)
    kept = found.source in ("cache", "shipped")
    check_live = opts.check_live if opts.check_live is not None else (0 if kept else 1)
    if opts.check_live is None and kept:
        err.print(Text(f"live check skipped for {found.source} traces (--check-live 1 runs it)", style="dim"))
    if check_live:
        n = check_live
        check = _check_live_sampled if not cfg.sampling.greedy else _check_live
        payload["live_check"] = check(console, err, pair, pid[:n], traces[:n], cfg, cost)
    if opts.validate:
        rows = run_live(console, err, pair, pid, cfg, label, payload, out)
        rows = files.write_csv(files.csv_path_for(out), cells, "sim", rows)
        payload["validation"] = _compare_cells(console, cells, live_cells(payload))
    if opts.tune_method is not None:
        payload["tune"] = run_tune(console, err, traces, cost, cfg, opts.tune_method, opts.std_weight,
                                   found.passes)
    return rows


def _deploy(console: Console, pair: ModelPair, traces: list, found: TraceSet, cfg: protocol.SweepConfig,
            opts: SimulateOptions) -> dict:
    """--for: the traces played under each engine's own rules, priced like the sweep (or by --costs)."""
    from ..deploy.advise import advise_traces
    from ..deploy.rank import given_prices, sim_prices
    from ..deploy.report import print_advice
    from ..deploy.source_commands import named_draft
    from ...engine.drafting.draft_sources import pair_drafter

    prices = given_prices(traces, *opts.costs) if opts.costs else sim_prices(traces, found.cost, found.passes)
    draft = named_draft(pair_drafter(pair), pair.name_draft)   # a head's commands name its source, not a model
    advice = advise_traces(pair.name_target, draft, traces, prices, opts.engines, cfg.gammas, cfg.max_new_tokens,
                           _law(cfg))
    print_advice(console, advice)
    return advice.to_json()


def _law(cfg: protocol.SweepConfig) -> str:
    """How the traces were decoded, for titles: "greedy" or "sampled, T = 0.7, top-p 0.9"."""
    s = cfg.sampling
    if s.greedy:
        return "greedy"
    return ", ".join(["sampled", f"T = {s.temperature:g}"] + ([f"top-k {s.top_k}"] if s.top_k else [])
                     + ([f"top-p {s.top_p:g}"] if s.top_p < 1 else []))


def _check_live(console: Console, err: Console, pair: ModelPair, pid: list, traces: list, cfg: protocol.SweepConfig,
                cost: CostModel) -> dict:
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
    for chk in checks:   # not `c`: that name held the column titles above
        table.add_row(Text(chk.method), Text(str(chk.gamma0)), Text(chk.prompt_id),
                      Text("yes" if chk.steps_equal else f"no (step {chk.first_difference})",
                           style="" if chk.steps_equal else "red"),
                      Text("yes" if chk.output_equal else "no"),
                      Text(f"{chk.live_tokens / chk.live_s:.1f}" if chk.live_s else "—"),
                      Text(f"{chk.sim_tokens / chk.sim_s:.1f}" if chk.sim_s else "—"), Text(f"{chk.ratio:.3f}"))
    console.print(table)
    exact = sum(c.steps_equal for c in checks)
    ratios = [c.ratio for c in checks if not math.isnan(c.ratio)]
    mean_abs = sum(abs(r - 1) for r in ratios) / len(ratios) if ratios else math.nan
    console.print(Text(live_check_line(exact, len(checks), ratios), style="bold"))
    return {"checks": [c.to_json() for c in checks], "step_exact": exact, "total": len(checks),
            "mean_abs_rel_error": mean_abs}


TIMING_MOVED = 0.25   # a simulated-vs-live gap beyond this is the machine's load, not the simulator


def live_check_line(exact: int, total: int, ratios: list[float]) -> str:
    """The live check's verdict: steps matched, and how far the simulated speed is from the live one.

    Said as a gap ("differs by 3.1 %"), never "within 97.5 %", which read as
    agreement; a gap past TIMING_MOVED says that the timings moved between
    the timing passes and the live runs (a busy machine), and that the
    step-by-step match is what checks the simulator.
    """
    worst = max((abs(r - 1) for r in ratios), default=math.nan)
    mean_abs = sum(abs(r - 1) for r in ratios) / len(ratios) if ratios else math.nan
    line = (f"step-exact: {exact}/{total}; simulated tok/s differs from live by {worst:.1%} at worst, "
            f"{mean_abs:.1%} on average")
    if worst > TIMING_MOVED:
        line += (" — more than the simulator's error: the live runs and the timing passes saw different loads "
                 "(a busy machine); the step-exact count is what checks the simulator")
    return line


LIVE_SEEDS = 4  # sampled live check: live runs per (prompt, method, γ0)


def _check_live_sampled(console: Console, err: Console, pair: ModelPair, pid: list, traces: list, cfg: protocol.SweepConfig,
                        cost: CostModel) -> dict:
    """Sampled traces agree with live runs in law, not token for token: tokens per step, live (several seeds) vs replayed."""
    gs = sorted({cfg.gammas[0], cfg.gammas[len(cfg.gammas) // 2], cfg.gammas[-1]})
    rows: list[dict[str, Any]] = []   # a JSON row per (method, γ0)
    with progress_bar(err) as prog:
        task = prog.add_task("live check (sampled)", total=len(pid) * len(cfg.methods) * len(gs) * LIVE_SEEDS)
        for m in cfg.methods:
            for g in gs:
                s = PolicySettings.build(m, g, **cfg.params)
                live_tok = live_steps = sim_tok = sim_steps = 0
                for p, t in zip(pid, traces):
                    rec = sim.play_trace(t, s.make(), cfg.max_new_tokens, cost)
                    sim_tok, sim_steps = sim_tok + rec.tokens, sim_steps + rec.steps
                    for seed in range(LIVE_SEEDS):
                        r = protocol.run_policy(pair, s, p, cfg.max_new_tokens, seed=(cfg.seed + 1 + seed) % (SEED_MAX + 1),
                                                sampling=cfg.sampling)
                        live_tok, live_steps = live_tok + r.tokens, live_steps + r.steps
                        prog.update(task, advance=1)
                rows.append({"method": m, "gamma0": g, "live_tokens_per_step": live_tok / max(live_steps, 1),
                             "sim_tokens_per_step": sim_tok / max(sim_steps, 1)})
    table = Table(title=Text(f"Simulator vs live, sampled (tokens per step; live: {LIVE_SEEDS} seeds per prompt)"),
                  title_justify="left")
    for c in ("method", "γ0", "live", "simulated", "sim/live"):
        table.add_column(c, justify="left" if c == "method" else "right", no_wrap=c == "method")
    for row in rows:   # not `r`: that name held the live RunRecords above
        row["ratio"] = row["sim_tokens_per_step"] / row["live_tokens_per_step"] if row["live_tokens_per_step"] else math.nan
        table.add_row(Text(row["method"]), Text(str(row["gamma0"])), Text(f"{row['live_tokens_per_step']:.2f}"),
                      Text(f"{row['sim_tokens_per_step']:.2f}"), Text(f"{row['ratio']:.3f}"))
    console.print(table)
    ratios = [row["ratio"] for row in rows if not math.isnan(row["ratio"])]
    mean_abs = sum(abs(r - 1) for r in ratios) / len(ratios) if ratios else math.nan
    console.print(Text(f"sampled runs agree in law, not token for token: simulated tokens/step within {mean_abs:.1%} "
                       f"of live on average ({len(pid)} prompt(s), one trace each: expect sampling noise)",
                       style="bold"))
    return {"sampled": True, "rows": rows, "mean_abs_rel_error": mean_abs}


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
