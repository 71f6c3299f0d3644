"""Parsing the bench's list-valued flags, before any model loads (a typo costs nothing).

Also the defaults that `bench --help` and `doctor --help` show: this module
imports no torch, so declaring those commands costs nothing either.
"""

from __future__ import annotations

from ..errors import InvalidParameter

DOCTOR_GAMMAS = (1, 2, 3, 4, 6, 8, 12, 16)   # the γ0 values doctor simulates each method at
DOCTOR_VERIFY_PROMPTS = 3                     # prompts `doctor --verify` runs live


def parse_gammas(text: str) -> list[int]:
    """'1,2,4' → [1, 2, 4]; every entry a whole number >= 1, no duplicates."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(p == "" for p in parts):
        raise InvalidParameter(f"--gammas must be a comma-separated list of whole numbers >= 1, got {text!r}")
    out: list[int] = []
    for p in parts:
        if not p.isdigit() or int(p) < 1:
            raise InvalidParameter(f"--gammas: {p!r} is not a whole number >= 1 (in {text!r})")
        if int(p) in out:
            raise InvalidParameter(f"--gammas: {p} appears twice")
        out.append(int(p))
    return out


def check_windows(gammas: list[int], max_new_tokens: int, gamma_max: int | None = None) -> None:
    """No γ0 (nor a --gamma-max given) above the token budget: no window drafts past the answer, and a
    simulation records its traces as deep as the longest window (twenty digits ran for ever)."""
    for g in gammas:
        if g > max_new_tokens:
            raise InvalidParameter(f"--gammas: {g} is more than --max-new-tokens ({max_new_tokens}); "
                                   "no window drafts past the answer")
    if gamma_max is not None and gamma_max > max_new_tokens:
        raise InvalidParameter(f"--gamma-max {gamma_max} is more than --max-new-tokens ({max_new_tokens}); "
                               "no window drafts past the answer")


def parse_ints(text: str, flag: str) -> list[int]:
    try:
        vals = [int(p.strip()) for p in str(text).split(",")]
    except ValueError:
        raise InvalidParameter(f"{flag} must be a comma-separated list of whole numbers, got {text!r}") from None
    if any(v < 1 for v in vals):
        raise InvalidParameter(f"{flag}: every value must be >= 1, got {text!r}")
    return vals
