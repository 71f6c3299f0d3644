"""The one closeness rule for logits that two forward paths of the same model must share.

A runner's step, a graph's replay or the direct forward is trusted only if its
logits match the model's own forward within this tolerance; the tests compare
with the same rule, so a check that passes here passes on any CPU or GPU
whose kernels round differently (AVX2 vs AVX-512 sum in another order: an fp32
difference of a few 1e-4 at the logits' scale), while a real error — a key
attended that should not be, a position off by one — is orders larger.
"""

from __future__ import annotations


import torch

FP32_TOL = 1e-3
HALF_TOL = 2e-2


def logits_tolerance(dtype: torch.dtype) -> float:
    """Relative and absolute tolerance for logits computed in `dtype`."""
    return FP32_TOL if dtype == torch.float32 else HALF_TOL


def compute_dtype(model: torch.nn.Module) -> torch.dtype:
    """The precision a model computes its logits in: bfloat16 for a weight-only quantized copy (its layers
    say so, `computes_in`: engine/drafting/quantized.py, every matmul's inputs and outputs are bfloat16,
    though its logits are handed back as float32), else its parameters' dtype."""
    try:
        if any(getattr(type(m), "computes_in", None) == torch.bfloat16 for m in model.modules()):
            return torch.bfloat16
        return next(model.parameters()).dtype
    except (AttributeError, StopIteration):
        return torch.float32


def logits_close(want: torch.Tensor, got: torch.Tensor, computed_in: torch.dtype | None = None) -> bool:
    """Whether `got` is `want` computed another way: close, and in fp32 the same argmax.

    In half precision a step of other shapes rounds differently from the
    model's own (an ulp at the logits' scale), which can swap two near-tied
    tokens, so there the rule is closeness alone, scaled to the logits' size.
    `computed_in` names the precision the logits were computed in where it is
    lower than their dtype (a quantized draft's bfloat16 matmuls, `compute_dtype`).
    """
    dtype = computed_in or want.dtype
    exact = dtype == torch.float32
    tol = logits_tolerance(dtype)
    w, g = want.float(), got.float()
    if w.shape != g.shape:
        return False
    scale = 1.0 if exact else max(1.0, float(w.abs().max()))
    return torch.allclose(w, g, rtol=tol, atol=tol * scale) and (not exact or torch.equal(w.argmax(-1), g.argmax(-1)))
