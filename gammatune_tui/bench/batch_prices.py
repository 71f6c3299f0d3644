"""A server's prices at each batch size: what `doctor --batch` times here (live/batch_costs.py) or reads from a
server's own measurement (`--batch-costs FILE`), kept in the bench's root so the room that times them and the room
that plays the traces over them (deploy/concurrency.py) share the one type without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameter


@dataclass
class BatchCosts:
    """Seconds per forward, per batch size, one value per timing round (the medians of `REPEATS` timings)."""

    context: int                                                         # tokens in each sequence's cache
    step_s: dict[int, list[float]] = field(default_factory=dict)        # B → target forward of B × 1
    verify_s: dict[int, dict[int, list[float]]] = field(default_factory=dict)   # B → k → target forward of B × k
    draft_s: dict[int, list[float]] = field(default_factory=dict)       # B → draft forward of B × 1 (0: no model)
    given: bool = False                                                  # read from a file, not timed here

    @property
    def batches(self) -> list[int]:
        return sorted(self.step_s)

    @property
    def rounds(self) -> int:
        return min((len(v) for v in self.step_s.values()), default=0)

    def to_json(self) -> dict[str, Any]:
        return {"context": self.context, "given": self.given,
                "step_ms": {str(b): [round(s * 1e3, 4) for s in v] for b, v in self.step_s.items()},
                "verify_ms": {str(b): {str(k): [round(s * 1e3, 4) for s in v] for k, v in ks.items()}
                              for b, ks in self.verify_s.items()},
                "draft_ms": {str(b): [round(s * 1e3, 4) for s in v] for b, v in self.draft_s.items()}}


def read_costs(data: object, where: str) -> BatchCosts:
    """A server's own prices per batch size (`--batch-costs FILE`): {"B": {"step_ms": x, "draft_ms": y,
    "verify_ms": {"k": z, …}}, …}; anything else is one line naming what is wrong."""
    def bad(why: str) -> InvalidParameter:
        return InvalidParameter(f"--batch-costs {where}: {why}")

    if not isinstance(data, dict) or not data:
        raise bad('expected an object keyed by batch size, e.g. {"1": {"step_ms": 20, "draft_ms": 2, '
                  '"verify_ms": {"5": 24}}}')
    out = BatchCosts(context=0, given=True)

    def ms(v: object, name: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < 1e7) or v != v:
            raise bad(f"{name} must be a number of milliseconds, got {v!r}")
        return float(v) / 1e3

    for key, entry in data.items():
        if not str(key).isdigit() or int(key) < 1:
            raise bad(f"batch size {key!r} is not a positive whole number")
        if not isinstance(entry, dict):
            raise bad(f"batch {key}: expected an object with step_ms, draft_ms and verify_ms")
        for name in ("step_ms", "draft_ms", "verify_ms"):
            if name not in entry:
                raise bad(f"batch {key}: {name} is missing")
        b = int(key)
        out.step_s[b] = [ms(entry["step_ms"], f"batch {key} step_ms")]
        out.draft_s[b] = [ms(entry["draft_ms"], f"batch {key} draft_ms")]
        ver = entry["verify_ms"]
        if not isinstance(ver, dict) or not ver:
            raise bad(f"batch {key}: verify_ms must map a window (tokens per sequence) to milliseconds")
        for k, v in ver.items():
            if not str(k).isdigit() or int(k) < 1:
                raise bad(f"batch {key}: verify window {k!r} is not a positive whole number")
            out.verify_s.setdefault(b, {})[int(k)] = [ms(v, f"batch {key} verify_ms[{k}]")]
        out.verify_s[b].setdefault(1, out.step_s[b])
    return out


def parse_batches(text: str | None) -> list[int]:
    """--batch 1,4,16,64 → sorted, distinct batch sizes from 1 to 1024; one line naming what is wrong."""
    if text is None:
        return []
    try:
        sizes = sorted({int(p) for p in text.split(",")})
    except ValueError:
        raise InvalidParameter(f"--batch {text!r}: give batch sizes as whole numbers, e.g. 1,4,16,64") from None
    if not sizes or sizes[0] < 1 or sizes[-1] > 1024:
        raise InvalidParameter(f"--batch {text!r}: batch sizes run from 1 to 1024")
    return sizes


__all__ = ["BatchCosts", "parse_batches", "read_costs"]
