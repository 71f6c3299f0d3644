"""`gammatune bench --latency`: the paper's Table 1 — ms per token and per verify pass for model shapes."""

from __future__ import annotations

import csv
import math
import platform
import sys
import time
from pathlib import Path

import torch
from rich.console import Console
from rich.text import Text

from ...engine.common.devices import resolve_device, resolve_dtype
from ...engine.common.kernel_path import kernel_path, native_bf16_unit
from ...errors import EngineUnavailable, Interrupted, InvalidParameter
from ..live import latency as lat
from ..report.files import write_json
from ..report.columns import Column, human_count, print_fitted
from .common import progress_bar, quiet_transformers


def latency_columns(rows: list, ks: list[int]) -> list[Column]:
    """Table 1's columns: one spec per column, so a new one (a runner, a bandwidth share) is one more entry."""
    cols = [Column("model shape", [Text(r.name) for r in rows], justify="left", key=True)]
    if any(getattr(r, "runner", "transformers") != "transformers" for r in rows):
        cols.append(Column("runner", [getattr(r, "runner", "") for r in rows], justify="left", key=True))
    cols.append(Column("params", [human_count(r.params) for r in rows]))
    cols.append(Column("decode ms/token", ["skipped" if r.skipped else f"{r.decode_ms:.2f}" for r in rows],
                       short="decode", meaning="decode ms/token"))
    for k in ks:
        cols.append(Column(f"verify {k} ms", ["" if r.skipped else f"{r.verify_ms[k]:.2f}" for r in rows],
                           short=f"v{k}", meaning=f"verify {k}"))
    for k in [k for k in ks if k > 1]:
        cols.append(Column(f"c({k})", [Text("") if r.skipped else Text(f"{c_of(r, k):.2f}") for r in rows],
                           short=f"c{k}", meaning=f"verify {k} ÷ one-token pass"))
    gbs = [getattr(r, "decode_gbs", math.nan) for r in rows]
    if any(not math.isnan(g) for g in gbs):
        cols.append(Column("decode GB/s", ["" if r.skipped or math.isnan(g) else f"{g:.1f}" for r, g in zip(rows, gbs)],
                           short="GB/s", meaning="bytes a decode step reads ÷ its time"))
    pct = [getattr(r, "bandwidth_pct", math.nan) for r in rows]
    if any(not math.isnan(p) for p in pct):
        cols.append(Column("% of copy bandwidth", ["" if math.isnan(p) else f"{p:.0f}%" for p in pct],
                           short="%bw", meaning="decode GB/s as a share of the measured copy bandwidth"))
    paper = [lat.PAPER_TABLE1.get(r.name) for r in rows]
    cols.append(Column("paper (H100)", [f"{p:.2f}" if p else "" for p in paper], short="paper",
                       meaning="the paper's H100 decode ms/token"))
    return cols


def c_of(row: object, k: int) -> float:
    """c(k): a k-token verify's time over one one-token pass (the verify-1 column when timed, else decode)."""
    verify = getattr(row, "verify_ms", {})
    one = verify.get(1) or getattr(row, "decode_ms", math.nan)
    return verify[k] / one if one and k in verify else math.nan


def latency_runners(engine: str, device: str) -> list[str]:
    """What `--engine` times: with auto, transformers' own forward and every runner the device has."""
    if engine in ("auto", "", None):
        return ["transformers", "eager", "static"] + (["graphs"] if device.startswith("cuda") else [])
    return [engine]


def check_context_fits(context: int, ks: list[int], shapes: list[tuple[str, dict]]) -> None:
    """--latency-context plus the longest verify must fit some shape's positions (a typo of 20 digits overflowed
    torch's sizes after the models were built: a traceback)."""
    need = context + max(ks, default=1)
    longest = max((int(shape.get("max_position_embeddings") or 0), name) for name, shape in shapes)
    if longest[0] and need > longest[0]:
        raise InvalidParameter(f"--latency-context {context} with --verify-k up to {max(ks, default=1)} needs {need:,} "
                               f"positions; the longest shape asked for ({longest[1]}) has {longest[0]:,}")


def run_latency(console: Console, err: Console, *, device: str, dtype: str, threads: int | None,
                shapes: list[str], context: int, ks: list[int], out: Path, engine: str = "auto") -> None:
    """Times every shape that fits (or the ones asked for) with each runner, prints Table 1, writes JSON and CSV."""
    dev = resolve_device(device)
    unit = native_bf16_unit() if dtype in ("auto", "", None) and dev.type == "cpu" else ""
    device, dtype = str(dev), str(resolve_dtype(dtype, dev)).replace("torch.", "")
    names = shapes or list(lat.SHAPES)
    loaded = [lat.load_shape(n) for n in names]  # unknown names fail before anything is built
    check_context_fits(context, ks, loaded)
    if unit:   # random-weight shapes have no checkpoint to weigh: say what `run` would load a real one at
        err.print(Text(f"--dtype auto times float32 here; on this CPU ({unit}) `run` loads a model of 64 MB or more "
                       "in bfloat16: add --dtype bfloat16 to time that path", style="yellow"))
    if threads:
        torch.set_num_threads(threads)
    plan = lat.plan(names, device, torch.tensor([], dtype=getattr(torch, dtype)).element_size(), explicit=bool(shapes))
    quiet_transformers()
    runners = latency_runners(engine, device)
    copy_gbs = None
    todo = sum(not why for _, _, why in plan) * len(runners)
    rows: list = []
    interrupted = False
    try:
        if any(r != "transformers" for r in runners):
            err.print(Text("measuring the device's copy bandwidth…", style="dim"))
            copy_gbs = lat.copy_bandwidth(device)
        _measure(err, plan, runners, rows, device, dtype, context, ks, copy_gbs)
    except KeyboardInterrupt:   # as the live bench does: the rows measured so far are printed and written
        interrupted = True
    measured = sum(not r.skipped for r in rows)
    if interrupted and not measured:
        raise Interrupted(f"0 of {todo} rows measured; {out} not written")
    cut = f" — interrupted after {measured} of {todo} rows" if interrupted else ""
    kernel = "; ".join(dict.fromkeys(r.kernel for r in rows if r.kernel and not r.skipped)) or kernel_path(dtype, device)
    print_fitted(console, f"Table 1: ms per token on {device} ({dtype}, {context} tokens in cache, random weights){cut}",
                 latency_columns(rows, ks),
                 caption=f"verify k = one target pass over k tokens, ms; c(k) = verify k ÷ a one-token pass; "
                         f"kernel path: {kernel}")

    payload = {"schema": 1, "created": time.time(), "command": ["gammatune", *sys.argv[1:]], "kind": "latency",
               "environment": {"device": device, "dtype": dtype, "kernel": kernel, "torch": torch.__version__,
                               "torch_threads": torch.get_num_threads(), "machine": platform.machine(),
                               "platform": platform.platform(), "python": platform.python_version()},
               "context": context, "engine": engine, "copy_gbs": copy_gbs, "rows": [r.to_json() for r in rows]}
    write_json(out, payload)

    with out.with_suffix(".csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["shape", "params", "device", "dtype", "context", "runner", "decode_ms"]
                   + [f"verify_{k}_ms" for k in ks] + ["decode_gbs", "bandwidth_pct", "skipped"])
        for r in rows:
            w.writerow([r.name, r.params, r.device, r.dtype, r.context, r.runner,
                        "" if r.skipped else f"{r.decode_ms:.4f}"]
                       + ["" if r.skipped else f"{r.verify_ms[k]:.4f}" for k in ks]
                       + ["" if r.skipped or math.isnan(r.decode_gbs) else f"{r.decode_gbs:.2f}",
                          "" if r.skipped or math.isnan(r.bandwidth_pct) else f"{r.bandwidth_pct:.1f}", r.skipped])
    if interrupted:
        raise Interrupted(f"{measured} of {todo} rows measured; {out} and {out.with_suffix('.csv')} hold them")
    err.print(Text(f"wrote {out} and {out.with_suffix('.csv')}"))


def _measure(err: Console, plan: list, runners: list[str], rows: list, device: str, dtype: str, context: int,
             ks: list[int], copy_gbs: float | None) -> None:
    """Times each planned shape with each runner, appending to `rows` as it goes (a Ctrl+C keeps what is done)."""
    with progress_bar(err) as prog:
        task = prog.add_task("latency", total=len(plan) * len(runners))
        for name, shape, why in plan:
            for runner in runners:
                if why:
                    rows.append(lat.LatencyRow(name, lat.param_count(shape), device, dtype, context, skipped=why,
                                               runner=runner))
                else:
                    prog.update(task, description=f"{name} · {runner}")
                    try:
                        rows.append(lat.measure(name, shape, device, dtype, context, tuple(ks), runner=runner,
                                                copy_gbs=copy_gbs))
                    except EngineUnavailable as exc:   # this runner cannot run this shape here: say so, go on
                        rows.append(lat.LatencyRow(name, lat.param_count(shape), device, dtype, context,
                                                   skipped=str(exc), runner=runner))
                prog.update(task, advance=1)
            if why:
                err.print(Text(f"skipping {name}: {why}", style="yellow"))
