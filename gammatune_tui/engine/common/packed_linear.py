"""A float32 verify at about the price of one step on a CPU: Linear layers with a oneDNN-packed copy.

Why: a speculative step's verify multiplies k rows by every weight matrix,
and on a CPU MKL's sgemm prices that near k one-row products (one of
SmolLM2's 576 x 1536 layers, streamed from memory: 5 rows 1.8x one row, 9
rows 2.5x) although the weights are read once either way. oneDNN with the
weights reordered once into its blocked layout reads them as a one-row
product does: 5 rows 1.04x, 9 rows 1.25x (the whole model's c(5): 1.73 ->
1.38, docs/precision.md). Products of up to 3 rows keep MKL's path
(its small-row kernel holds there, and the packed layout costs 5-20 % more),
so a target-only step — and `target.generate`'s — runs exactly as it did,
and so does a verify of γ 1 or 2. The copy costs the Linears'
bytes a second time, so it is made only where it pays:

* `auto` (the default): a float32 model on an x86-64 CPU whose torch has
  oneDNN, whose Linears hold at least `MIN_BYTES` (below that the weights
  sit in cache and MKL's small-row path wins: the demo pair's 5-row pass
  4.6 ms plain, 5.9 ms packed), and whose copy fits in a quarter of the
  memory available;
* `GAMMATUNE_PACKED_VERIFY=1` packs any float32 CPU model, `0` never.

Exactness: the packed product rounds differently from MKL's in the last
float32 bits, as MKL's own k-row product already does from its one-row
product; greedy output stays `target.generate`'s (tests hold it against an
unpacked copy of the model). The packed tensor is oneDNN's opaque layout,
kept outside the module's parameters and buffers (state_dict, deepcopy and
byte counts see the float weight only).
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ...errors import InvalidParameter
from .devices import cpu_available_bytes

PACK_ENV = "GAMMATUNE_PACKED_VERIFY"
FROM_ROWS = 4   # MKL's small-row path holds up to 3 rows (576x1536: 262/285/319 us for 1/2/3 rows, then 472 at 4;
                # packed 290/304/326, then 319): fewer rows than this keep MKL's product
MIN_BYTES = 64 * 2**20   # Linears smaller than this stay in cache, where MKL's path is the faster one


class _Opaque:
    """Holds the packed tensor; copies of a module share it (an opaque oneDNN tensor cannot be deep-copied)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor

    def __deepcopy__(self, memo: dict) -> _Opaque:
        return self


class PackedVerifyLinear(nn.Linear):
    """An nn.Linear whose products of FROM_ROWS rows or more read a oneDNN-packed copy of its weight; fewer, F.linear.

    The float `weight` Parameter is the original one (tied heads stay tied, and
    whatever reads `.weight` reads what it always did).
    """

    def __init__(self, linear: nn.Linear):
        nn.Module.__init__(self)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        self.copy_bytes = linear.weight.numel() * linear.weight.element_size()   # the packed copy's, for headers
        with torch.no_grad():
            self._packed = _Opaque(torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach().contiguous()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.numel() < FROM_ROWS * self.in_features or x.dtype != torch.float32:
            return F.linear(x, self.weight, self.bias)
        shape = x.shape
        y = torch.ops.mkldnn._linear_pointwise(x.reshape(-1, shape[-1]).contiguous(), self._packed.tensor,
                                               self.bias, "none", [], "")
        return y.reshape(*shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", products of {FROM_ROWS}+ rows: oneDNN packed"


@dataclass(frozen=True)
class Packing:
    """What packing did to a model: how many layers, the bytes the copy adds, and why (for the header/doctor)."""

    layers: int
    added_bytes: int
    why: str


def pack_setting() -> str:
    """auto, 1 or 0 from GAMMATUNE_PACKED_VERIFY; anything else is one line (InvalidParameter)."""
    v = os.environ.get(PACK_ENV, "auto").strip().lower() or "auto"
    if v not in ("auto", "1", "0"):
        raise InvalidParameter(f"{PACK_ENV} must be auto, 1 or 0, got {v!r}")
    return v


def _linears(model: nn.Module) -> list[tuple[nn.Module, str, nn.Linear]]:
    return [(m, name, c) for m in model.modules() for name, c in m.named_children() if type(c) is nn.Linear]


def pack_for_verify(model: nn.Module, device: torch.device, dtype: torch.dtype) -> Packing | None:
    """Give `model`'s plain Linears a packed copy for multi-row passes where it pays (module docstring); or None."""
    setting = pack_setting()
    if setting == "0" or device.type != "cpu" or dtype != torch.float32 or not torch.backends.mkldnn.is_available():
        return None
    found = _linears(model)
    size = sum(lin.weight.numel() * lin.weight.element_size() for _, _, lin in found)
    if not found:
        return None
    if setting == "auto":
        free = cpu_available_bytes()
        if platform.machine().lower() not in ("x86_64", "amd64") or size < MIN_BYTES or (free and size > free // 4):
            return None
        why = f"auto: float32 Linears of {size / 2**20:.0f} MB stream from memory"
    else:
        why = f"{PACK_ENV}=1"
    with torch.no_grad():
        for module, name, lin in found:
            setattr(module, name, PackedVerifyLinear(lin))
    return Packing(len(found), size, why)


def packed(model: nn.Module | None) -> bool:
    """Whether `model` runs its multi-row passes through packed weights."""
    return model is not None and any(isinstance(m, PackedVerifyLinear) for m in model.modules())


__all__ = ["PackedVerifyLinear", "Packing", "pack_for_verify", "pack_setting", "packed", "PACK_ENV", "MIN_BYTES", "FROM_ROWS"]
