"""Strict readers of one field of an event's JSON object: recordings are untrusted input.

Each returns the value or raises `EventFormatError` naming the key and what it
must be; an optional key that is absent or null gives its default.
"""

from __future__ import annotations


class EventFormatError(ValueError):
    """A JSON object that is not a valid event; the message says which field."""


def _num(d: dict, key: str, *, optional: bool = False, default: float = 0.0) -> float:
    v = d.get(key, None)
    if v is None:
        if optional:
            return default
        raise EventFormatError(f"missing number {key!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EventFormatError(f"{key!r} must be a number")
    return float(v)


def _int(d: dict, key: str, *, optional: bool = False, default: int = 0, minimum: int | None = 0) -> int:
    v = d.get(key, None)
    if v is None:
        if optional:
            return default
        raise EventFormatError(f"missing integer {key!r}")
    if isinstance(v, bool) or not isinstance(v, int):
        raise EventFormatError(f"{key!r} must be an integer")
    if minimum is not None and v < minimum:
        raise EventFormatError(f"{key!r} must be >= {minimum}")
    return v


def _str(d: dict, key: str, *, optional: bool = True, default: str = "") -> str:
    v = d.get(key, None)
    if v is None:
        if optional:
            return default
        raise EventFormatError(f"missing string {key!r}")
    if not isinstance(v, str):
        raise EventFormatError(f"{key!r} must be a string")
    return v


def _list(d: dict, key: str, *, optional: bool = False) -> list:
    v = d.get(key, None)
    if v is None:
        if optional:
            return []
        raise EventFormatError(f"missing list {key!r}")
    if not isinstance(v, list):
        raise EventFormatError(f"{key!r} must be a list")
    return v


def _dict(d: dict, key: str, *, optional: bool = True) -> dict:
    v = d.get(key, None)
    if v is None:
        if optional:
            return {}
        raise EventFormatError(f"missing object {key!r}")
    if not isinstance(v, dict):
        raise EventFormatError(f"{key!r} must be an object")
    return v


def _prob(d: dict, key: str) -> float:
    v = d.get(key, None)
    if v is None:
        return float("nan")
    p = _num(d, key)
    if not (0.0 <= p <= 1.0 + 1e-6):
        raise EventFormatError(f"{key!r} must be a probability in [0, 1]")
    return p


def _entropy(d: dict) -> float | None:
    """A drafted token's entropy in nats: None where it was not measured."""
    if d.get("entropy") is None:
        return None
    h = _num(d, "entropy")
    if not h >= -1e-6:
        raise EventFormatError("'entropy' must be a number >= 0 (nats)")
    return h
