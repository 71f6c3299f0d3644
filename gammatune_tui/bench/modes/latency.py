"""`gammatune bench --latency`: the paper's Table 1 — ms per token and per verify pass for model shapes."""

from __future__ import annotations

import csv
import platform
import sys
import time
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...engine.models import resolve_device, resolve_dtype
from .. import latency as lat
from ..report import write_json
from .common import progress_bar, quiet_transformers


def run_latency(console: Console, err: Console, *, device: str, dtype: str, threads: int | None,
                shapes: list[str], context: int, ks: list[int], out: Path) -> None:
    """Times every shape that fits (or the ones asked for), prints Table 1, writes the JSON and CSV."""
    dev = resolve_device(device)
    device, dtype = str(dev), str(resolve_dtype(dtype, dev)).replace("torch.", "")
    names = shapes or list(lat.SHAPES)
    for n in names:
        lat.load_shape(n)  # unknown names fail before anything is built
    if threads:
        torch.set_num_threads(threads)
    plan = lat.plan(names, device, torch.tensor([], dtype=getattr(torch, dtype)).element_size(), explicit=bool(shapes))
    quiet_transformers()
    rows = []
    with progress_bar(err) as prog:
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

    payload = {"schema": 1, "created": time.time(), "command": ["gammatune", *sys.argv[1:]], "kind": "latency",
               "environment": {"device": device, "dtype": dtype, "torch": torch.__version__,
                               "torch_threads": torch.get_num_threads(), "machine": platform.machine(),
                               "platform": platform.platform(), "python": platform.python_version()},
               "context": context, "rows": [r.to_json() for r in rows]}
    write_json(out, payload)

    with out.with_suffix(".csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["shape", "params", "device", "dtype", "context", "decode_ms"] + [f"verify_{k}_ms" for k in ks] + ["skipped"])
        for r in rows:
            w.writerow([r.name, r.params, r.device, r.dtype, r.context, "" if r.skipped else f"{r.decode_ms:.4f}"]
                       + ["" if r.skipped else f"{r.verify_ms[k]:.4f}" for k in ks] + [r.skipped])
    err.print(Text(f"wrote {out} and {out.with_suffix('.csv')}"))
