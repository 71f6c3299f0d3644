"""`--for` and `--costs` as `doctor` and `bench --simulate` both take them: checked before any model loads."""

from __future__ import annotations

import math

from ...errors import InvalidParameter
from .engines import Engine, parse_engines


def parse_for(text: str | None) -> list[Engine]:
    """--for ENGINES → the engine rows (none when not given); a wrong name is one line naming the right ones."""
    if text is None:
        return []
    try:
        return parse_engines(text)
    except ValueError as exc:
        raise InvalidParameter(f"--for: {exc}") from None


def parse_costs(text: str | None) -> tuple[float, float] | None:
    """--costs DRAFT_MS,VERIFY_MS → (draft ms per token, ms per target forward); None when not given."""
    if text is None:
        return None
    try:
        pair = tuple(float(p) for p in text.split(","))
    except ValueError:
        pair = ()
    if len(pair) != 2 or not all(math.isfinite(x) and x > 0 for x in pair):
        raise InvalidParameter(f"--costs {text!r}: give two positive numbers, DRAFT_MS,VERIFY_MS (e.g. 2.5,18)")
    return pair[0], pair[1]


__all__ = ["parse_costs", "parse_for"]
