"""The benchmark's raw numbers: one `RunRecord` per (method, γ0, prompt, repeat).

Live runs, simulated runs and the baselines all produce the same record, so
the report, the tables and the JSON/CSV files never care where a number came
from. Aggregation is by sums (total tokens / total seconds), so a long prompt
weighs as much as its tokens, as a user waiting on the whole set would see it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from ..engine.acceptance import position_rates

# Baselines measured beside the five policies. They are not γ policies, so they
# live outside METHODS; the HF ones are swept over γ0 like the policies.
PLAIN = "target-only"
HF_HEURISTIC = "hf-assisted-heuristic"
HF_CONSTANT = "hf-assisted-constant"
BASELINES = (PLAIN, HF_HEURISTIC, HF_CONSTANT)


@dataclass
class RunRecord:
    """One generation of one prompt under one method and γ0."""

    method: str
    gamma0: int | None
    prompt_id: str
    repeat: int = 0
    kind: str = "live"  # "live" or "sim"
    tokens: int = 0
    steps: int = 0
    drafted: int = 0
    accepted: int = 0
    wall_s: float = 0.0
    draft_s: float = 0.0
    verify_s: float = 0.0
    pos_drafted: list[int] = field(default_factory=list)
    pos_accepted: list[int] = field(default_factory=list)
    stop_reason: str = ""
    output_ids: list[int] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Cell:
    """All runs of one (method, γ0), summed over prompts and repeats."""

    method: str
    gamma0: int | None
    runs: int = 0
    tokens: int = 0
    steps: int = 0
    drafted: int = 0
    accepted: int = 0
    wall_s: float = 0.0
    draft_s: float = 0.0
    verify_s: float = 0.0
    pos_drafted: list[int] = field(default_factory=list)
    pos_accepted: list[int] = field(default_factory=list)

    def add(self, r: RunRecord) -> None:
        self.runs += 1
        self.tokens += r.tokens
        self.steps += r.steps
        self.drafted += r.drafted
        self.accepted += r.accepted
        self.wall_s += r.wall_s
        self.draft_s += r.draft_s
        self.verify_s += r.verify_s
        _add_lists(self.pos_drafted, r.pos_drafted)
        _add_lists(self.pos_accepted, r.pos_accepted)

    @property
    def throughput(self) -> float:
        """Tokens per second over the whole prompt set."""
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else 0.0

    @property
    def per_position(self) -> list[float]:
        return position_rates(self.pos_drafted, self.pos_accepted)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(throughput=self.throughput, acceptance_rate=self.acceptance_rate,
                 tokens_per_step=self.tokens_per_step, per_position=self.per_position)
        return d


def _add_lists(into: list[int], more: list[int]) -> None:
    while len(into) < len(more):
        into.append(0)
    for i, v in enumerate(more):
        into[i] += v


def aggregate(records: Iterable[RunRecord]) -> dict[tuple[str, int | None], Cell]:
    """Cells keyed by (method, γ0), in first-seen order."""
    cells: dict[tuple[str, int | None], Cell] = {}
    for r in records:
        key = (r.method, r.gamma0)
        if key not in cells:
            cells[key] = Cell(r.method, r.gamma0)
        cells[key].add(r)
    return cells


def throughputs(cells: dict[tuple[str, int | None], Cell]) -> dict[str, dict[int | None, float]]:
    """method → {γ0 → tokens/s}: the shape Table 2 is computed from."""
    out: dict[str, dict[int | None, float]] = {}
    for (method, g), cell in cells.items():
        out.setdefault(method, {})[g] = cell.throughput
    return out
