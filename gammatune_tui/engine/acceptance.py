"""Per-position acceptance (SPEC §5): P(token i accepted | token i drafted).

One counting rule for the decoder's summary, the running stats the UI shows
and the benchmark's cells, so the three can never disagree on what the
number means.
"""

from __future__ import annotations


def count_step(pos_drafted: list[int], pos_accepted: list[int], drafted: int, accepted: int) -> None:
    """Adds one step in place: positions 0..drafted−1 were drafted, the first `accepted` of them kept."""
    while len(pos_drafted) < drafted:
        pos_drafted.append(0)
        pos_accepted.append(0)
    for i in range(drafted):
        pos_drafted[i] += 1
        if i < accepted:
            pos_accepted[i] += 1


def position_rates(pos_drafted: list[int], pos_accepted: list[int]) -> list[float]:
    return [a / d if d else 0.0 for a, d in zip(pos_accepted, pos_drafted)]
