"""The greedy lossless check, said honestly at low precision (docs/precision.md).

Greedy speculative decoding must produce the target's own text. In float32
on this CPU a k-token verify gives the same logits as one-token decoding
(measured on SmolLM2: 0.0 apart), so any difference there is a fault. In
bfloat16 or float16 the two paths round differently: a 5-token verify's
logits sat up to 1.03 from one-token decoding's on SmolLM2 in bfloat16
(about 4 units in the last place of a top logit near 33). Where the target's
top two logits are that close, the verify can pick the other one: that is the
numerics of the precision, not speculation's fault, and calling it
"NOT lossless" sends a user hunting a bug that is not there.

So the first difference is judged by the target-only run's own top-two
logit gap at that token (`PlainRun.margins`): within the precision's
rounding (ROUNDING_ULPS units in the last place of the top logit: both
logits may move, each by up to ~4 ulps) it is a near-tie, said as one;
wider, or in float32, it is reported as NOT lossless. Without target-only's
logits (a recording) a low-precision difference is said as unchecked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

ROUNDING_ULPS = 8
"""A near-tie: the top two logits at most this many units in the last place (of the top logit) apart.

Measured: SmolLM2-135M in bfloat16, a 5-token verify's logits against one-token
decoding's, up to 1.03 apart at a top logit near 33 (ulp 0.25: ~4 ulps); a flip
needs the two logits to move opposite ways, so twice that."""

MANTISSA_BITS = {"bfloat16": 7, "float16": 10}
"""Explicit mantissa bits of the precisions that round a verify differently; float32 must be exact."""


def rounding(dtype: str, top: float) -> float | None:
    """The widest top-two gap a k-token verify can flip at `dtype` for a top logit `top`; None: exact expected."""
    bits = MANTISSA_BITS.get(dtype.replace("torch.", ""))
    if bits is None:
        return None
    exponent = math.frexp(abs(top))[1] - 1 if top else 0      # top = m · 2^exponent, 1 <= m < 2
    return ROUNDING_ULPS * 2.0 ** (exponent - bits)


@dataclass(frozen=True)
class Lossless:
    """The greedy check: all texts identical, or where they first part and whether a near-tie explains it."""

    checked: bool             # False when sampling (texts may differ legitimately)
    identical: bool
    position: int | None = None   # first differing token index
    method: str = ""              # the first method that differs from the reference
    reference: str = ""           # the method compared against (target-only when measured, else the first)
    dtype: str = ""               # the target's precision, where the texts part
    gap: float | None = None      # target-only's top-two logit gap at `position` (when it recorded them)
    tolerance: float | None = None    # the precision's rounding at that logit (None: float32, exact expected)

    @property
    def near_tie(self) -> bool:
        """A difference the precision's rounding explains: not a fault."""
        return (not self.identical and self.gap is not None and self.tolerance is not None
                and self.gap <= self.tolerance)

    @property
    def unchecked(self) -> bool:
        """A low-precision difference with no target-only logits to judge it by (a recording)."""
        return not self.identical and self.gap is None and rounding(self.dtype, 1.0) is not None

    @property
    def fault(self) -> bool:
        """A real difference: greedy speculation did not reproduce the target's text."""
        return self.checked and not self.identical and not self.near_tie and not self.unchecked

    @property
    def message(self) -> str:
        if not self.checked:
            return "sampling (temperature > 0): texts may differ between methods; the output law is the target's"
        if self.identical:
            if self.reference == "target-only":
                return "lossless: every method produced the target's own tokens (greedy, checked against target-only)"
            return "lossless: every method produced the same tokens (greedy)"
        where = f"{self.method} differs from {self.reference} at token {self.position}"
        if self.near_tie:
            return (f"{where}: a near-tie in {self.dtype} (top two logits {self.gap:.2f} apart, within its rounding "
                    f"of {self.tolerance:.2f}); a k-token verify rounds differently from one-token decoding "
                    "(docs/precision.md)")
        if self.unchecked:
            return (f"{where} in {self.dtype}: not judged (no target-only logits here); a near-tie can flip at this "
                    "precision, a float32 run checks exactly (docs/precision.md)")
        why = "greedy decoding should give identical text"
        if self.gap is not None and self.tolerance is not None:
            why = (f"top two logits {self.gap:.2f} apart, wider than {self.dtype}'s rounding of "
                   f"{self.tolerance:.2f}: not a near-tie")
        return f"NOT lossless: {where} ({why})"


def first_difference(ref_ids: Sequence[int], ids: Sequence[int], stopped: bool) -> int | None:
    """The first token where `ids` parts from `ref_ids` (a length difference counts unless a run was stopped)."""
    n = min(len(ids), len(ref_ids))
    pos = next((i for i in range(n) if ids[i] != ref_ids[i]), None)
    if pos is None and len(ids) != len(ref_ids) and not stopped:
        pos = n   # one is longer: a difference unless a run was stopped by the user
    return pos


def judge(position: int, method: str, reference: str, dtype: str,
          margins: Sequence[tuple[float, float]] = ()) -> Lossless:
    """A greedy difference at `position`, judged by target-only's (top logit, top-two gap) there when recorded."""
    gap = tol = None
    if position < len(margins):
        top, gap = margins[position]
        tol = rounding(dtype, top)
    return Lossless(True, False, position, method, reference, dtype=dtype.replace("torch.", ""), gap=gap,
                    tolerance=tol)


def worst(verdicts: Sequence[Lossless]) -> Lossless | None:
    """The verdict to show: a fault before an unchecked difference before a near-tie; the earliest within each."""
    if not verdicts:
        return None
    return min(verdicts, key=lambda v: (0 if v.fault else 1 if v.unchecked else 2, v.position or 0))


__all__ = ["Lossless", "ROUNDING_ULPS", "first_difference", "judge", "rounding", "worst"]
