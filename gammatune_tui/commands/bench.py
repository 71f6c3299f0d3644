"""`gammatune bench`: the paper's evaluation on any pair, the trace simulator, tuning and Table 1.

Input is checked before any model loads, so a typo costs nothing; every user
mistake ends as one line and exit status 2 (GammatuneError, printed by cli.main).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Optional

import click
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from ..bench.args import parse_gammas, parse_ints, parse_methods  # noqa: F401  (tests import them from here)
from ..engine.policies import METHODS
from ..errors import InvalidParameter
from .options import common_options

DEFAULT_GAMMAS = "1,2,3,4,5,6,7,8,12,16,20,24"
BENCH = "Benchmark"


def _given(ctx: click.Context | None, name: str) -> bool:
    """Whether an option was typed on the command line (not just its default)."""
    if ctx is None:
        return False
    src = ctx.get_parameter_source(name)
    return src is not None and src.name == "COMMANDLINE"


def register(app: typer.Typer) -> None:
    app.command("bench", help="Reproduce the paper's Table 2 on a pair: every method × γ0, live or simulated; "
                              "--tune searches the policy parameters; --latency gives Table 1.")(bench)


@common_options()
def bench(
    ctx: typer.Context,
    prompts: Optional[str] = typer.Option(None, "--prompts", help="Prompt set: code, specbench, or a .jsonl file (default: code for the demo pair, else specbench).", rich_help_panel=BENCH),
    methods: Optional[str] = typer.Option(None, "--methods", help=f"Comma-separated methods (default all: {', '.join(METHODS)}).", rich_help_panel=BENCH),
    gammas: Optional[str] = typer.Option(None, "--gammas", help=f"Comma-separated initial γ0 values (default {DEFAULT_GAMMAS}).", rich_help_panel=BENCH),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Times each (prompt, method, γ0) is run live.", rich_help_panel=BENCH),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Use only the first N prompts of the set.", rich_help_panel=BENCH),
    out: Path = typer.Option(Path("gammatune-bench.json"), "--out", "-o", help="JSON file with every raw number and the environment; a CSV goes beside it.", rich_help_panel=BENCH),
    simulate: bool = typer.Option(False, "--simulate", help="Record one trace per prompt and replay every policy exactly from it (greedy only).", rich_help_panel=BENCH),
    validate: bool = typer.Option(False, "--validate", help="With --simulate: also run the live sweep and compare it with the simulation cell by cell.", rich_help_panel=BENCH),
    check_live: int = typer.Option(1, "--check-live", min=0, help="With --simulate: prompts on which every method at a few γ0 is also run live and compared step by step (0 = none).", rich_help_panel=BENCH),
    traces_path: Optional[Path] = typer.Option(None, "--traces", help="With --simulate/--tune: reuse the traces and cost model in this file, or save them there.", rich_help_panel=BENCH),
    tune_: bool = typer.Option(False, "--tune", help="Search η, δ, τ and the γ bounds on the traces (implies --simulate).", rich_help_panel=BENCH),
    tune_method: str = typer.Option("gammatune+", "--tune-method", help="The policy whose parameters --tune optimises.", rich_help_panel=BENCH),
    std_weight: float = typer.Option(1.0, "--std-weight", min=0.0, help="--tune score: mean speedup − this × its std across γ0.", rich_help_panel=BENCH),
    baselines: bool = typer.Option(True, "--baselines/--no-baselines", help="Also measure target-only decoding and transformers' assisted generation (live sweep).", rich_help_panel=BENCH),
    latency: bool = typer.Option(False, "--latency", help="The paper's Table 1 instead: ms per token and per verify pass for model shapes, random weights.", rich_help_panel=BENCH),
    shape: list[str] = typer.Option([], "--shape", help="--latency: a built-in shape (repeatable) or a path to a config.json; default: every built-in shape that fits.", rich_help_panel=BENCH),
    latency_context: int = typer.Option(128, "--latency-context", min=1, help="--latency: tokens already in the KV cache.", rich_help_panel=BENCH),
    verify_ks: str = typer.Option("1,2,4,8,16", "--verify-k", help="--latency: verify window sizes to time.", rich_help_panel=BENCH),
    *,
    opts: Any,
) -> None:
    console = Console()
    err = Console(stderr=True)
    if latency:
        _latency(console, err, opts, shape, latency_context, parse_ints(verify_ks, "--verify-k"), out)
        return
    # --methods/--gammas sweep; a lone --method/--gamma (the shared options) narrows the sweep to it
    method_list = parse_methods(methods) if methods is not None else (
        parse_methods(opts.method) if _given(ctx, "method") else list(METHODS))
    gamma_list = parse_gammas(gammas) if gammas is not None else (
        parse_gammas(str(opts.gamma)) if _given(ctx, "gamma") else parse_gammas(DEFAULT_GAMMAS))
    if opts.temperature not in (None, 0, 0.0):
        raise InvalidParameter("bench measures greedy decoding (the paper's protocol): --temperature must be 0")
    if opts.max_new_tokens < 1:
        raise InvalidParameter(f"--max-new-tokens must be >= 1, got {opts.max_new_tokens}")
    if tune_ and tune_method not in ("gammatune", "gammatune+", "assistant-threshold", "hf-heuristic"):
        raise InvalidParameter(f"--tune-method must be gammatune, gammatune+, assistant-threshold or hf-heuristic, got {tune_method!r}")
    params = _policy_params(opts)
    simulate = simulate or tune_
    if validate and not simulate:
        raise InvalidParameter("--validate compares the simulation with a live run: use it with --simulate")
    if gamma_list and "specdecode" not in method_list:
        err.print(Text("note: specdecode is not in --methods, so Table 2 (speedup over specdecode) is skipped",
                       style="yellow"))

    from ..prompts import load_prompt_set

    prompt_set = prompts or ("code" if opts.uses_demo else "specbench")
    prompt_list = load_prompt_set(prompt_set)  # PromptFileError → one line, before any model loads
    if limit:
        prompt_list = prompt_list[:limit]
    if out.exists() and out.is_dir():
        raise InvalidParameter(f"--out {out} is a directory; give a file name")

    from ..bench import protocol, report
    from ..engine import load_pair

    _quiet_transformers()
    with err.status("loading models…"):
        pair = load_pair(**opts.load_kwargs())
    pid = [protocol.PromptIds(p.id, pair.encode_prompt(p.text, raw=opts.raw)) for p in prompt_list]
    cfg = protocol.SweepConfig(methods=method_list, gammas=gamma_list, max_new_tokens=opts.max_new_tokens,
                               repeats=repeats, params=params, seed=opts.seed,
                               baselines=protocol.ALL_BASELINES if baselines else ())
    label = f"{pair.name_target} / {pair.name_draft}"
    payload: dict[str, Any] = {
        "schema": 1,
        "created": time.time(),
        "command": ["gammatune", *sys.argv[1:]],
        "environment": protocol.environment(pair),
        "config": {"methods": method_list, "gammas": gamma_list, "max_new_tokens": opts.max_new_tokens,
                   "repeats": repeats, "params": params, "prompts": prompt_set, "prompt_ids": [p.id for p in pid],
                   "prompt_lengths": [len(p.ids) for p in pid], "seed": opts.seed, "greedy": True,
                   "std": "population (ddof=0) across γ0"},
    }
    csv_rows: list[dict[str, Any]] = []

    if simulate:
        csv_rows = _simulate(console, err, pair, pid, cfg, label, payload, out, traces_path, check_live, validate,
                             tune_, tune_method, std_weight)
    else:
        csv_rows = _live(console, err, pair, pid, cfg, label, payload, out)
    report.write_json(out, payload)
    err.print(Text(f"wrote {out} and {report.csv_path_for(out)}"))
    del csv_rows


def _policy_params(opts: Any) -> dict[str, Any]:
    """The policy parameters given on the command line (validated now, not after the models load)."""
    from ..engine.policies import PolicyParams

    given = {k: opts.values[k] for k in ("eta", "delta", "tau", "gamma_min", "gamma_max") if opts.values.get(k) is not None}
    if opts.values.get("dynamic_tau"):
        given["dynamic_tau"] = True
    PolicyParams.build(**given)
    return given


def _quiet_transformers() -> None:
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except Exception:  # pragma: no cover
        pass


def _progress(err: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True)


def _live(console: Console, err: Console, pair: Any, pid: list, cfg: Any, label: str, payload: dict, out: Path,
          title: str = "Table 2 (live)") -> list[dict[str, Any]]:
    from ..bench import protocol, report
    from ..bench.results import aggregate

    total = cfg.run_count(len(pid))
    with _progress(err) as prog:
        task = prog.add_task("live sweep", total=total)

        def step(desc: str, n: int) -> None:
            prog.update(task, advance=n, description=Text(desc[:40]).plain)

        records, checks = protocol.live_sweep(pair, pid, cfg, step)
    cells = aggregate(records)
    derived = report.print_report(console, cells, cfg.gammas, label, title=title)
    if checks["outputs_differing_from_target_only"]:
        err.print(Text(f"warning: {len(checks['outputs_differing_from_target_only'])} runs' greedy output differed "
                       "from target-only decoding (float near-ties); listed in the JSON", style="yellow"))
    payload["live"] = {"records": [r.to_json() for r in records], "cells": [c.to_json() for c in cells.values()],
                       "derived": derived, "checks": checks}
    return report.write_csv(report.csv_path_for(out), cells, "live")


def _simulate(console: Console, err: Console, pair: Any, pid: list, cfg: Any, label: str, payload: dict, out: Path,
              traces_path: Path | None, check_live: int, validate: bool, tune_: bool, tune_method: str,
              std_weight: float) -> list[dict[str, Any]]:
    from ..bench import report, simulate as sim
    from ..bench.results import aggregate
    from ..bench.tune import GRID

    max_window = max(max(cfg.gammas), cfg.params.get("gamma_max") or 0, max(GRID["gamma_max"]) if tune_ else 0)
    traces, cost = _load_or_record(err, pair, pid, cfg, max_window, traces_path)
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

    if check_live:
        payload["live_check"] = _check_live(console, err, pair, pid[:check_live], traces[:check_live], cfg, cost)
    if validate:
        rows = _live(console, err, pair, pid, cfg, label, payload, out)
        rows = report.write_csv(report.csv_path_for(out), cells, "sim", rows)
        payload["validation"] = _compare_cells(console, cells, aggregate_live(payload))
    if tune_:
        payload["tune"] = _tune(console, err, traces, cost, cfg, tune_method, std_weight)
    return rows


def aggregate_live(payload: dict) -> dict:
    from ..bench.results import RunRecord, aggregate

    return aggregate(RunRecord(**r) for r in payload["live"]["records"])


def _load_or_record(err: Console, pair: Any, pid: list, cfg: Any, max_window: int, traces_path: Path | None):
    from ..bench import protocol, simulate as sim
    from ..bench.cost_model import CALIBRATION_GAMMAS, CostModel, calibrate
    from ..engine.text_pieces import prompt_pieces

    key = {"target": str(pair.name_target), "draft": str(pair.name_draft), "device": str(pair.device),
           "dtype": str(pair.dtype), "prompts": [[p.id, p.ids] for p in pid], "max_new_tokens": cfg.max_new_tokens}
    if traces_path is not None and traces_path.exists():
        try:
            data = json.loads(traces_path.read_text(encoding="utf-8"))
            ok = data.get("key") == key and data.get("max_window", 0) >= max_window
            if ok:
                traces = [sim.Trace.from_json(t) for t in data["traces"]]
                err.print(Text(f"using the traces in {traces_path}"))
                return traces, CostModel.from_json(data["cost_model"])
            err.print(Text(f"{traces_path} was recorded for other models, prompts or windows; recording again",
                           style="yellow"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InvalidParameter(f"--traces {traces_path}: unreadable trace file ({exc})") from None
    traces = []
    with _progress(err) as prog:
        task = prog.add_task("recording traces", total=len(pid) + 2)
        protocol.warm_up(pair, pid[0], protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                                baselines=()))
        for p in pid:
            t0 = time.perf_counter()
            prompt_pieces(pair.tokenizer, p.ids)
            header_s = time.perf_counter() - t0
            traces.append(sim.record_trace(pair, p.id, p.ids, cfg.max_new_tokens, max_window - 1, pair.eos_ids, header_s))
            prog.update(task, advance=1, description=f"trace {p.id}")
        # the timing pass: the decoder itself, specdecode at several windows on the first prompt
        prog.update(task, description="timing the decoder")
        from ..engine.policies import PolicySettings

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
    from ..bench import protocol, simulate as sim
    from ..engine.policies import PolicySettings

    gs = sorted({cfg.gammas[0], cfg.gammas[len(cfg.gammas) // 2], cfg.gammas[-1]})
    checks = []
    with _progress(err) as prog:
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
    from ..bench.report import table2
    from ..bench.results import throughputs

    ts, tl = throughputs(sim_cells), throughputs(live_cells)
    if "specdecode" in ts and "specdecode" in tl:
        a, b = table2(ts), table2(tl)
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


def _tune(console: Console, err: Console, traces: list, cost: Any, cfg: Any, method: str, std_weight: float) -> dict:
    from ..bench import tune as tn

    with _progress(err) as prog:
        task = prog.add_task(f"tuning {method}", total=None)
        best, start, scored, secs = tn.tune(traces, cost, cfg.gammas, method, std_weight=std_weight,
                                            max_new_tokens=cfg.max_new_tokens,
                                            progress=lambda n: prog.update(task, advance=n))
    top = sorted(scored, key=lambda s: -s.score)[:8]
    table = Table(title=Text(f"--tune {method}: simulated speedup over specdecode across γ0 "
                             f"(score = mean − {std_weight:g}·std)"), title_justify="left")
    for c in ("", "η", "δ", "τ", "γ_min", "γ_max", "mean", "std", "score"):
        table.add_column(c, justify="left" if c == "" else "right")

    def row(tag: str, s: Any) -> None:
        p = s.params
        table.add_row(Text(tag), Text(f"{p['eta']:g}"), Text(str(p["delta"])), Text(f"{p['tau']:g}"),
                      Text(str(p["gamma_min"])), Text(str(p["gamma_max"])), Text(f"{s.mean:.3f}"),
                      Text(f"{s.std:.3f}"), Text(f"{s.score:.3f}"))

    row("current defaults", start)
    for i, s in enumerate(top):
        row("best" if i == 0 else f"#{i + 1}", s)
    console.print(table)
    gain = best.mean / start.mean - 1 if start.mean else math.nan
    console.print(Text(f"best: --eta {best.params['eta']:g} --delta {best.params['delta']} --tau {best.params['tau']:g} "
                       f"--gamma-min {best.params['gamma_min']} --gamma-max {best.params['gamma_max']}  "
                       f"({best.mean:.3f} ± {best.std:.3f}× vs defaults {start.mean:.3f} ± {start.std:.3f}×, "
                       f"{gain:+.1%} mean; {len(scored)} candidates in {secs:.1f} s)", style="bold"))
    result = {"method": method, "std_weight": std_weight, "best": best.to_json(), "start": start.to_json(),
              "candidates": [s.to_json() for s in scored], "seconds": secs}
    if len(traces) >= 4:
        # Over-fitting check: tune on every other prompt, score on the rest.
        fit, held = traces[0::2], traces[1::2]
        with _progress(err) as prog:
            task = prog.add_task("held-out check", total=None)
            best_fit, _, _, _ = tn.tune(fit, cost, cfg.gammas, method, std_weight=std_weight,
                                        max_new_tokens=cfg.max_new_tokens,
                                        progress=lambda n: prog.update(task, advance=n))
        import statistics

        base = statistics.fmean(tn.throughput(held, "specdecode", g, {}, cost, cfg.max_new_tokens) for g in cfg.gammas)
        h_best = tn.score(held, method, cfg.gammas, best_fit.params, cost, base, std_weight, cfg.max_new_tokens)
        h_def = tn.score(held, method, cfg.gammas, start.params, cost, base, std_weight, cfg.max_new_tokens)
        console.print(Text(f"held-out check (tuned on {len(fit)} prompts, scored on the other {len(held)}): "
                           f"tuned {h_best.mean:.3f} ± {h_best.std:.3f}× vs defaults {h_def.mean:.3f} ± {h_def.std:.3f}×"))
        result["held_out"] = {"fit_prompts": [t.prompt_id for t in fit], "tuned_on_fit": best_fit.to_json(),
                              "held_out_tuned": h_best.to_json(), "held_out_defaults": h_def.to_json()}
    return result


def _latency(console: Console, err: Console, opts: Any, shapes: list[str], context: int, ks: list[int],
             out: Path) -> None:
    from ..bench import latency as lat
    from ..bench.report import write_json

    from ..engine.models import resolve_device, resolve_dtype

    dev = resolve_device(opts.device)
    device, dtype = str(dev), str(resolve_dtype(opts.dtype, dev)).replace("torch.", "")
    names = shapes or list(lat.SHAPES)
    for n in names:
        lat.load_shape(n)  # unknown names fail before anything is built
    if opts.threads:
        import torch

        torch.set_num_threads(opts.threads)
    import torch

    plan = lat.plan(names, device, torch.tensor([], dtype=getattr(torch, dtype)).element_size(), explicit=bool(shapes))
    _quiet_transformers()
    rows = []
    with _progress(err) as prog:
        task = prog.add_task("latency", total=len(plan))
        for name, shape, why in plan:
            if why:
                err.print(Text(f"skipping {name}: {why}", style="yellow"))
                rows.append(lat.LatencyRow(name, lat.param_count(shape), device, dtype, context, skipped=why))
            else:
                prog.update(task, description=f"building {name}")
                rows.append(lat.measure(name, shape, device, dtype, context, tuple(ks)))
            prog.update(task, advance=1)
    table = Table(title=Text(f"Table 1: ms per token on {device} ({dtype}, {context} tokens in cache, random weights)"),
                  title_justify="left")
    table.add_column("model shape", no_wrap=True)
    table.add_column("params", justify="right")
    table.add_column("decode ms/token", justify="right")
    for k in ks:
        table.add_column(f"verify {k} ms", justify="right")
    table.add_column("paper (H100)", justify="right")
    for r in rows:
        paper = lat.PAPER_TABLE1.get(r.name)
        cells = [Text(r.name), Text(f"{r.params / 1e6:,.0f}M")]
        if r.skipped:
            cells += [Text("skipped")] + [Text("") for _ in ks]
        else:
            cells += [Text(f"{r.decode_ms:.2f}")] + [Text(f"{r.verify_ms[k]:.2f}") for k in ks]
        cells.append(Text(f"{paper:.2f}" if paper else ""))
        table.add_row(*cells)
    console.print(table)
    import platform

    payload = {"schema": 1, "created": time.time(), "command": ["gammatune", *sys.argv[1:]], "kind": "latency",
               "environment": {"device": device, "dtype": dtype, "torch": torch.__version__,
                               "torch_threads": torch.get_num_threads(), "machine": platform.machine(),
                               "platform": platform.platform(), "python": platform.python_version()},
               "context": context, "rows": [r.to_json() for r in rows]}
    write_json(out, payload)
    import csv

    with out.with_suffix(".csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["shape", "params", "device", "dtype", "context", "decode_ms"] + [f"verify_{k}_ms" for k in ks] + ["skipped"])
        for r in rows:
            w.writerow([r.name, r.params, r.device, r.dtype, r.context, "" if r.skipped else f"{r.decode_ms:.4f}"]
                       + ["" if r.skipped else f"{r.verify_ms[k]:.4f}" for k in ks] + [r.skipped])
    err.print(Text(f"wrote {out} and {out.with_suffix('.csv')}"))


__all__ = ["register", "bench", "parse_gammas", "parse_methods"]
