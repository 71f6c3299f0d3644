"""The benchmark's raw numbers: one `RunRecord` per (method, γ0, prompt, repeat).

Live runs, simulated runs and the baselines all produce the same record, so
the report, the tables and the JSON/CSV files never care where a number came
from. A record and a cell are the engine's one tally (steps, drafted,
accepted, calls, times, per position) plus tokens and wall time, so their
acceptance numbers are the decoder's and the UI's. Aggregation is by sums
(total tokens / total seconds), so a long prompt weighs as much as its
tokens, as a user waiting on the whole set would see it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Iterable

from ..engine.events.tally import SessionTally, speculative_decoding

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# Baselines measured beside the five policies. They are not γ policies, so they
# live outside METHODS; the HF ones are swept over γ0 like the policies.
PLAIN = "target-only"
HF_HEURISTIC = "hf-assisted-heuristic"
HF_CONSTANT = "hf-assisted-constant"
HF_LOOKUP = "hf-prompt-lookup"  # transformers' prompt lookup decoding: the peer of a prompt-lookup sweep
BASELINES = (PLAIN, HF_HEURISTIC, HF_CONSTANT, HF_LOOKUP)


@dataclass
class RunRecord(SessionTally):
    """One generation of one prompt under one method and γ0 (the tally's counts are keywords)."""

    method: str
    gamma0: int | None
    prompt_id: str
    repeat: int = 0
    kind: str = "live"  # "live" or "sim"
    tokens: int = 0
    wall_s: float = 0.0
    stop_reason: str = ""
    output_ids: list[int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {**_fields(self), "speculative_decoding": speculative_decoding(self)}


@dataclass
class Cell(SessionTally):
    """All runs of one (method, γ0), summed over prompts and repeats."""

    method: str
    gamma0: int | None
    runs: int = 0
    tokens: int = 0
    wall_s: float = 0.0

    def add_run(self, r: RunRecord) -> None:
        self.runs += 1
        self.tokens += r.tokens
        self.wall_s += r.wall_s
        self.add(r)

    @property
    def throughput(self) -> float:
        """Tokens per second over the whole prompt set."""
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else 0.0

    def to_json(self) -> dict[str, Any]:
        d = _fields(self)
        d.update(throughput=self.throughput, acceptance_rate=self.acceptance_rate,
                 tokens_per_step=self.tokens_per_step, per_position=self.per_position,
                 speculative_decoding=speculative_decoding(self))
        return d


def _copy(v: object) -> object:
    return [_copy(x) if type(x) is list else x for x in v] if type(v) is list else v


def _fields(obj: DataclassInstance) -> dict[str, Any]:
    """`dataclasses.asdict` for a record of numbers, strings and lists of them: the same dict, without its
    deep copy of every number (a --simulate writes some 4,000 records; asdict was most of their JSON's time)."""
    return {f.name: _copy(getattr(obj, f.name)) for f in fields(obj)}


def aggregate(records: Iterable[RunRecord]) -> dict[tuple[str, int | None], Cell]:
    """Cells keyed by (method, γ0), in first-seen order."""
    cells: dict[tuple[str, int | None], Cell] = {}
    for r in records:
        key = (r.method, r.gamma0)
        if key not in cells:
            cells[key] = Cell(r.method, r.gamma0)
        cells[key].add_run(r)
    return cells


def throughputs(cells: dict[tuple[str, int | None], Cell]) -> dict[str, dict[int | None, float]]:
    """method → {γ0 → tokens/s}: the shape Table 2 is computed from."""
    out: dict[str, dict[int | None, float]] = {}
    for (method, g), cell in cells.items():
        out.setdefault(method, {})[g] = cell.throughput
    return out
