"""`gammatune bench` (live): the paper's Table 2 protocol run on the pair, every method × γ0, with baselines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ...engine.common.pair import ModelPair
from ..live import protocol
from ..report import files
from ..report import tables as report
from ..results import RunRecord, aggregate
from .common import progress_bar


def run_live(console: Console, err: Console, pair: ModelPair, pid: list, cfg: protocol.SweepConfig, label: str, payload: dict, out: Path,
             title: str = "Table 2 (live)") -> list[dict[str, Any]]:
    """The live sweep: progress, the report on `console`, records and cells into `payload`, the CSV rows."""
    stateful = protocol.stateful_model(pair)
    trimmed = protocol.for_pair(cfg, pair)
    if trimmed is not cfg:
        err.print(Text(f"note: transformers' assisted generation refuses stateful models ({stateful}): "
                       "its baselines are left out", style="yellow"))
        cfg = trimmed
    total = cfg.run_count(len(pid))
    with progress_bar(err) as prog:
        task = prog.add_task("live sweep", total=total)

        def step(desc: str, n: int) -> None:
            prog.update(task, advance=n, description=Text(desc[:40]).plain)

        records, checks = protocol.live_sweep(pair, pid, cfg, step)
    cells = aggregate(records)
    if checks.get("interrupted"):
        title += f" — interrupted after {len(records)} of {total} runs"
    derived = report.print_report(console, cells, cfg.gammas, label, title=title) if records else {}
    if checks["outputs_differing_from_target_only"]:
        err.print(Text(f"NOT lossless: {len(checks['outputs_differing_from_target_only'])} runs' greedy output "
                       "differed from target-only decoding, not at a near-tie the precision explains; listed in "
                       "the JSON (docs/precision.md)", style="bold red"))
    if checks.get("near_ties"):
        first = checks["near_ties"][0]
        err.print(Text(f"{len(checks['near_ties'])} runs' greedy output parted from target-only at a near-tie in "
                       f"{first[5]} (the first at token {first[4]}: top two logits {first[6]:.2f} apart, within "
                       f"its rounding of {first[7]:.2f}); a k-token verify rounds differently from one-token "
                       "decoding (docs/precision.md); listed in the JSON", style="yellow"))
    payload["live"] = {"records": [r.to_json() for r in records], "cells": [c.to_json() for c in cells.values()],
                       "derived": derived, "checks": checks}
    return files.write_csv(files.csv_path_for(out), cells, "live")


def live_cells(payload: dict) -> dict:
    """The live sweep's cells, from the records `run_live` put in `payload`."""
    # (a record's JSON also carries its `speculative_decoding` view, derived from the counts: not a field)
    return aggregate(RunRecord(**{k: v for k, v in r.items() if k != "speculative_decoding"})
                     for r in payload["live"]["records"])
