"""Traces kept one by one as they are recorded, so a Ctrl+C during `bench --simulate` loses none of them.

Recording the demo set's traces takes minutes; the finished trace file (the
traces with the decoder's timing, trace_cache.py) can only be written once
all of them are recorded and timed. Until then each trace is appended, as it
finishes, to a JSON Lines file beside that file (`….json.partial`): a first
line with the key the traces were recorded under, then one line per trace.
The next run with the same key starts from the traces found there and
records only the rest; the file goes once the finished trace file is written.

A line cut short by a crash is skipped (the traces before it stay), and a
file recorded under another key is replaced: traces never cross models,
prompts, budgets, machines' settings or versions.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..sim.sim_trace import SimTrace
from ..sim.trace_kinds import trace_from_json


def partial_path(path: Path) -> Path:
    """Where the traces of an unfinished recording for the trace file `path` are kept."""
    return path.with_name(path.name + ".partial")


class PartialTraces:
    """The traces recorded so far for one key, appended as each finishes; `None` path: not kept (unwritable)."""

    def __init__(self, path: Path | None, key: dict[str, Any], max_window: int) -> None:
        self.path, self.key, self.max_window = path, key, max_window
        self._started = False   # whether this run has written the file's first line (or found a matching one)

    def load(self) -> dict[str, Any]:
        """prompt id → trace, from an earlier run that stopped with this key (deeper windows serve shallower)."""
        if self.path is None or not self.path.is_file():
            return {}
        found: dict[str, Any] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
            head = json.loads(lines[0]) if lines else {}
            if head.get("key") != self.key or head.get("max_window", 0) < self.max_window:
                return {}
            good = 1
            for line in lines[1:]:
                try:
                    d = json.loads(line)
                    found[str(d["prompt"])] = trace_from_json(d["trace"])
                except (ValueError, KeyError, TypeError, AttributeError):
                    break   # the line a crash cut short, and nothing after it
                good += 1
            if good < len(lines):   # drop the broken tail, so the lines appended next are whole
                tmp = self.path.with_name(self.path.name + ".tmp")
                tmp.write_text("".join(line + "\n" for line in lines[:good]), encoding="utf-8")
                os.replace(tmp, self.path)
        except (OSError, ValueError, AttributeError, IndexError):
            return {}
        self._started = True
        return found

    def add(self, prompt_id: str, trace: SimTrace) -> None:
        """Appends one finished trace and flushes it to disk; a file that cannot be written stops the keeping."""
        if self.path is None:
            return
        try:
            if not self._started:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("w", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": self.key, "max_window": self.max_window}) + "\n")
                self._started = True
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"prompt": prompt_id, "trace": trace.to_json()}) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError:
            self.path = None   # not kept; the interrupt message says so

    def remove(self) -> None:
        """The finished trace file holds them now."""
        if self.path is not None:
            try:
                self.path.unlink()
            except OSError:
                pass


__all__ = ["PartialTraces", "partial_path"]
