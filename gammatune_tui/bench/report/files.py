"""Writing benchmark cells out: one CSV row per (method, γ0) and the JSON payload.

Split from tables.py (which prints the same cells) so each file keeps one job: the
tables are for a reader at the terminal, these files for a spreadsheet or a script.
Both writers fail with one OutputError line (a full disk) and never leave a half file
where an earlier one stood.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

from ...errors import OutputError
from ..results import PLAIN, Cell
from ..sim.oracle import ORACLE
from .tables import table2


def csv_path_for(json_path: Path) -> Path:
    return json_path.with_suffix(".csv")


CSV_FIELDS = ("kind", "method", "gamma0", "runs", "tokens", "steps", "drafted", "accepted", "wall_s",
              "throughput_tok_s", "acceptance_rate", "tokens_per_step", "speedup_vs_specdecode",
              "speedup_vs_target_only", "share_of_oracle", "per_position")


def write_csv(path: Path, cells: dict[tuple[str, int | None], Cell], kind: str,
              rows_so_far: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One row per (method, γ0); `rows_so_far` lets live and simulated cells share one file."""
    from ..results import throughputs

    thr = throughputs(cells)
    t2 = table2(thr) if "specdecode" in thr else {}
    plain = thr.get(PLAIN, {}).get(None)
    oracle = thr.get(ORACLE, {}).get(None)
    rows = list(rows_so_far or [])
    for (m, g), c in cells.items():
        s = t2.get(m)
        rows.append({
            "kind": kind, "method": m, "gamma0": "" if g is None else g, "runs": c.runs, "tokens": c.tokens,
            "steps": c.steps, "drafted": c.drafted, "accepted": c.accepted, "wall_s": f"{c.wall_s:.6f}",
            "throughput_tok_s": f"{c.throughput:.4f}", "acceptance_rate": f"{c.acceptance_rate:.6f}",
            "tokens_per_step": f"{c.tokens_per_step:.6f}",
            "speedup_vs_specdecode": f"{s.per_gamma[g]:.6f}" if s and g in s.per_gamma else "",
            "speedup_vs_target_only": f"{c.throughput / plain:.6f}" if plain else "",
            "share_of_oracle": f"{c.throughput / oracle:.6f}" if oracle else "",
            "per_position": " ".join(f"{p:.4f}" for p in c.per_position),
        })
    try:
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
            w.writeheader()
            w.writerows(rows)
    except OSError as exc:   # a full disk: one line (the tables were printed already)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return rows


def write_json(path: Path, payload: dict[str, Any]) -> None:
    text = json.dumps(payload, indent=1, default=_json_default) + "\n"
    try:
        if path.exists() and not path.is_file():   # /dev/null, a FIFO: written to, never replaced by a file
            path.write_text(text, encoding="utf-8")
            return
        tmp = path.with_suffix(path.suffix + ".tmp")   # the folder was checked before the work (commands/output_paths.py)
        try:
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:   # a full disk: one line; an earlier file at `path` stays whole
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _json_default(o: object) -> object:
    if hasattr(o, "to_json"):
        return o.to_json()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
