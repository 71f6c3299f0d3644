"""Ranks that a spread allows: a row is ranked below the one above it only when the gap exceeds the spread.

A share of 0.71 against 0.70 means nothing when either moves by ±0.02
between timing passes, so ranking them 1 and 2 would be noise. Rows are
taken best first; a row whose gap to the first row of the current tie (its
leader) is within the larger of the two spreads shares its rank, otherwise
it takes its own position and leads a new tie — standard competition
ranking, so ranks read in order, and every member of a tie is marked as
one, as compare's table marks them: "1=", "1=", "3". Measuring the gap from the leader, not from the row just above,
keeps a chain of small steps from tying rows that are far apart.
"""

from __future__ import annotations

import math
from typing import Mapping


def gap_ranks(values: Mapping[str, float], spreads: Mapping[str, float]) -> dict[str, str]:
    """Name → rank text ("1", "2=", …) for `values` (higher is better); NaN values get "–"."""
    order = sorted((k for k in values if not math.isnan(values[k])), key=lambda k: -values[k])
    ranks: dict[str, int] = {}
    leader: str | None = None
    for pos, k in enumerate(order, start=1):
        if leader is not None and values[leader] - values[k] <= max(spreads.get(leader, 0.0), spreads.get(k, 0.0)):
            ranks[k] = ranks[leader]
        else:
            ranks[k] = pos
            leader = k
    counts: dict[int, int] = {}
    for r in ranks.values():
        counts[r] = counts.get(r, 0) + 1
    out = {k: (f"{r}=" if counts[r] > 1 else str(r)) for k, r in ranks.items()}
    for k in values:
        out.setdefault(k, "–")
    return out


__all__ = ["gap_ranks"]
