"""Race pacing for the compare screen: how recorded time maps to wall time.

Every pane replays its own measured step times; the whole race is scaled so it
lasts a few seconds even when the real runs took a fraction of one (the scale
is shown, so it stays honest).
"""

from __future__ import annotations

MIN_RACE_S = 4.0
"""A race shorter than this in real time is slowed down to last this long."""
MAX_RACE_S = 60.0
"""A race longer than this is sped up."""
ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th")


def race_scale(longest_s: float) -> float:
    """Recorded seconds per wall second at speed 1, for a race whose slowest run took `longest_s`."""
    if longest_s <= 0:
        return 1.0
    if longest_s < MIN_RACE_S:
        return longest_s / MIN_RACE_S
    if longest_s > MAX_RACE_S:
        return longest_s / MAX_RACE_S
    return 1.0


def ordinal(place: int) -> str:
    """'1st' for place 0, and so on."""
    return ORDINALS[place] if place < len(ORDINALS) else f"{place + 1}th"
