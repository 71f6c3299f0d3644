"""What a loaded model's weights are: quantized by optimum-quanto or not, their precision in words, their bytes.

One answer for every room that asks. The runners ask whether quanto replaced
the Linear layers (its int4 kernels fail under inference_mode, and its
weights are not captured in CUDA graphs); a self-draft refuses a target that
quanto quantized already; the session header and `ModelPair.precisions()`
record each model's precision and weight bytes. Kept below the rooms that
ask (common/), so none of them imports another for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # annotations only: common/ imports no torch at import (the pair type names these)
    import torch


def quanto_quantized(model: torch.nn.Module) -> bool:
    """Whether optimum-quanto replaced any of the model's modules (`--quantize int8|int4`)."""
    return any(type(m).__module__.startswith("optimum.quanto") for m in model.modules())


def model_precision(model: torch.nn.Module, quantize: str | None = None) -> str:
    """A model's precision in words: `float32`, `bfloat16`, `int8 (quanto)`… (a self-draft's is on its pair:
    `ModelPair.self_draft.precision`, `int4 g32`)."""
    if quantize:
        return f"{quantize} (quanto)"
    try:
        return str(next(model.parameters()).dtype).replace("torch.", "")
    except StopIteration:   # pragma: no cover - a model without parameters
        return "?"


def weight_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers (each tensor once), packed weights at their packed size."""
    seen: set[int] = set()
    total = 0
    for t in list(model.parameters()) + list(model.buffers()):
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        total += t.numel() * t.element_size()
    return total


def extra_bytes(model: torch.nn.Module, base: torch.nn.Module) -> int:
    """Bytes of `model`'s tensors that it does not share with `base` (what a self-draft adds)."""
    shared = {t.data_ptr() for t in list(base.parameters()) + list(base.buffers())}
    seen: set[int] = set()
    total = 0
    for t in list(model.parameters()) + list(model.buffers()):
        p = t.data_ptr()
        if p in shared or p in seen:
            continue
        seen.add(p)
        total += t.numel() * t.element_size()
    return total


def packed_copy_bytes(model: torch.nn.Module) -> int:
    """Bytes of the packed weight copies a float32 CPU target verifies through (packed_linear.py); 0 for none.
    They are no parameter or buffer, so `weight_bytes` does not see them, yet they are memory the model holds."""
    return sum(int(getattr(m, "copy_bytes", 0)) for m in model.modules())


def model_bytes(model: torch.nn.Module, base: torch.nn.Module | None = None) -> int:
    """A model's weight bytes; given `base` (a self-draft's target), only what it adds to the target's."""
    if base is not None:
        return extra_bytes(model, base)
    return weight_bytes(model)


__all__ = ["quanto_quantized", "model_precision", "weight_bytes", "extra_bytes", "model_bytes", "packed_copy_bytes"]
