"""A server's prices at each batch size: what `doctor --batch` times here (live/batch_costs.py) or reads from a
server's own measurement (`--batch-costs FILE`), kept in the bench's root so the room that times them and the room
that plays the traces over them (deploy/concurrency.py) share the one type without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameter


@dataclass
class BatchCosts:
    """Seconds per batch size, one value per timing round (the medians of that round's timings).

    A step of the target alone costs `step_s` + `overhead_s[1]`; a speculative
    step at K costs `draft_first_s` + (K − 1) × `draft_s` + `verify_s[K + 1]` +
    `overhead_s[K + 1]`. The overhead is the step's work outside the forwards
    (masks, positions, argmax, acceptance, reading the tokens back): on a small
    model it is a share of the step the forwards alone would leave out. A
    server's file may leave it and the first draft's price out (0 and `draft_s`).
    """

    context: int                                                         # tokens in each row's cache, target alone
    step_s: dict[int, list[float]] = field(default_factory=dict)        # B → target forward of B × 1
    verify_s: dict[int, dict[int, list[float]]] = field(default_factory=dict)   # B → k → target forward of B × k
    draft_s: dict[int, list[float]] = field(default_factory=dict)       # B → draft forward of B × 1 (0: no model)
    # B → a step's first draft forward, which also reads what the draft has not (B × 2); absent: draft_s
    draft_first_s: dict[int, list[float]] = field(default_factory=dict)
    # B → window → a step's work outside its forwards (window 1: the target alone; K + 1: speculative); absent: 0
    overhead_s: dict[int, dict[int, list[float]]] = field(default_factory=dict)
    spec_context: dict[int, int] = field(default_factory=dict)         # window → columns in a speculative row's cache
    given: bool = False                                                  # read from a file, not timed here

    @property
    def batches(self) -> list[int]:
        return sorted(self.step_s)

    @property
    def rounds(self) -> int:
        return min((len(v) for v in self.step_s.values()), default=0)

    def first_draft(self, b: int) -> list[float]:
        return self.draft_first_s.get(b) or self.draft_s[b]

    def overhead(self, b: int, window: int) -> list[float]:
        """A step's work outside its forwards, per round; [0.0] where it was not timed or given."""
        return self.overhead_s.get(b, {}).get(window) or [0.0]

    def to_json(self) -> dict[str, Any]:
        def ms(v: list[float]) -> list[float]:
            return [round(s * 1e3, 4) for s in v]

        return {"context": self.context, "given": self.given,
                "spec_context": {str(w): c for w, c in self.spec_context.items()},
                "step_ms": {str(b): ms(v) for b, v in self.step_s.items()},
                "verify_ms": {str(b): {str(k): ms(v) for k, v in ks.items()} for b, ks in self.verify_s.items()},
                "draft_ms": {str(b): ms(v) for b, v in self.draft_s.items()},
                "draft_first_ms": {str(b): ms(v) for b, v in self.draft_first_s.items()},
                "overhead_ms": {str(b): {str(w): ms(v) for w, v in ws.items()} for b, ws in self.overhead_s.items()}}


def read_costs(data: object, where: str) -> BatchCosts:
    """A server's own prices per batch size (`--batch-costs FILE`): {"B": {"step_ms": x, "draft_ms": y,
    "verify_ms": {"k": z, …}}, …}, each batch size optionally with "draft_first_ms" (a step's first draft forward)
    and "overhead_ms" (a step's work outside its forwards: one number for every step, or by window like verify_ms,
    "1" for the target alone); anything else is one line naming what is wrong."""
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
        if "draft_first_ms" in entry:
            out.draft_first_s[b] = [ms(entry["draft_first_ms"], f"batch {key} draft_first_ms")]
        over = entry.get("overhead_ms")
        if isinstance(over, dict):
            for w, v in over.items():
                if not str(w).isdigit() or int(w) < 1:
                    raise bad(f"batch {key}: overhead window {w!r} is not a positive whole number")
                out.overhead_s.setdefault(b, {})[int(w)] = [ms(v, f"batch {key} overhead_ms[{w}]")]
        elif over is not None:
            each = [ms(over, f"batch {key} overhead_ms")]
            out.overhead_s[b] = {w: each for w in out.verify_s[b]}
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
