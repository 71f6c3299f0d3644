"""One tunable's declaration, `ParamSpec`: its name, type, range, default, flag, label and help.

The γ policies' parameters (engine/policies/param_specs.py) and the draft
sources' own (engine/common/names.py, prompt lookup's n-gram sizes) are rows of
this one type, so the command line, `--help`, the controls and the docs read
both the same way. Pure data and arithmetic (no torch): `--help` answers at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Union

from ...errors import InvalidParameter

Number = Union[int, float, Fraction]
"""A bound or a number a user typed: a whole number, a float, or the exact rational kept for it."""
ParamValue = Union[int, float, Fraction, bool, str]
"""A parameter's value: as typed (a default, a user's), as `check` keeps it (Fraction, int, bool, str), or as JSON."""


@dataclass(frozen=True)
class ParamSpec:
    """One tunable: what it is, what values it takes, and how a user meets it.

    `kind` is float (kept as the exact rational the user typed), int (a whole
    number), bool (a switch) or str (a folder: a head's checkpoint, `--eagle3-head`). The range is [lo, hi], each end open when
    `lo_open`/`hi_open`, either end absent when None. `recorded` is True for
    the parameters every session records; the others are recorded only where
    they differ from the default, so sessions of the methods that do not read
    them record what they always did (their own methods list them always,
    `Policy.describe`). `in_params` is False for γ0 alone (a setting of its
    own beside `PolicyParams`, `--gamma`).
    """

    name: str
    kind: type
    default: ParamValue
    label: str
    help: str
    lo: Number | None = None
    hi: Number | None = None
    lo_open: bool = False
    hi_open: bool = False
    step: float = 1
    flag: str = ""
    short: str = ""
    column: str = ""
    grid: tuple = ()
    recorded: bool = False
    in_params: bool = True

    @property
    def cli_flag(self) -> str:
        """The long option: `--calib-forget` for calib_forget (γ0 is `--gamma`)."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def header(self) -> str:
        """The column header where tables are narrow (`bench --tune`)."""
        return self.column or self.label

    @cached_property
    def stored_default(self) -> ParamValue:
        """The default as `PolicyParams` holds it (an exact rational for a float); built once, as
        `PolicyParams.to_json` compares every parameter with it at each step's `describe()`."""
        return Fraction(str(self.default)) if self.kind is float else self.default

    def range_text(self, unicode: bool = False) -> str:
        """'in (0, 1]', 'a whole number >= 0', '> 0': the words of the error, `--help` and the tooltip."""
        if self.kind is bool:
            return "on or off"
        if self.kind is str:   # a head's folder, or a file (`--mtp-vocab-file`)
            return "a file" if self.name.endswith("_file") else "a folder"
        ge, gt = ("≥", ">") if unicode else (">=", ">")
        if self.lo is not None and self.hi is not None:
            text = f"in {'(' if self.lo_open else '['}{_num(self.lo)}, {_num(self.hi)}{')' if self.hi_open else ']'}"
        elif self.lo is not None:
            text = f"{gt if self.lo_open else ge} {_num(self.lo)}"
        else:
            text = "a number"
        if self.kind is int:
            return "a whole number" if self.lo is None else f"a whole number {text}"
        return text

    def check(self, value: object) -> ParamValue:
        """The value as `PolicyParams` holds it, or InvalidParameter naming the parameter and its range."""
        if self.kind is bool:
            return bool(value)
        if self.kind is str:   # a folder (a head's checkpoint): checked by the source that reads it
            return str(value)
        v = _integer(value, self.name) if self.kind is int else _exact(value, self.name)
        low_bad = self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo)
        high_bad = self.hi is not None and (v >= self.hi if self.hi_open else v > self.hi)
        if low_bad or high_bad:
            raise InvalidParameter(f"{self.name} must be {self.range_text()}, got {value}")
        return v

    def to_json(self, value: ParamValue) -> Any:   # JSON: the callers compare and record it as JSON
        """The value as a JSON number (a rational becomes a float)."""
        return float(value) if self.kind is float else value


def _num(x: ParamValue) -> str:
    f = Fraction(x)
    return str(f.numerator) if f.denominator == 1 else f"{float(f):g}"


def _exact(value: object, name: str) -> Fraction:
    """The exact rational the user meant: 0.1 is 1/10, not the nearest double."""
    if isinstance(value, bool):
        raise InvalidParameter(f"{name} must be a number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidParameter(f"{name} must be a finite number, got {value!r}")
        return Fraction(repr(value))
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise InvalidParameter(f"{name} must be a number, got {value!r}") from None
    raise InvalidParameter(f"{name} must be a number, got {value!r}")


def _integer(value: object, name: str) -> int:
    frac = _exact(value, name)
    if frac.denominator != 1:
        raise InvalidParameter(f"{name} must be a whole number, got {value!r}")
    return int(frac)
