"""Which matrix-multiply path a model's forward runs on this machine, in words.

A verify's price over one step, c(k), is the kernel's, not the model's: on the
2-core EPYC this project measures on, SmolLM2's vocabulary projection over 5
rows costs 2.8x one row in float32 (MKL's sgemm) and 1.36x in bfloat16
(oneDNN's brgemm on AMX tiles; ONEDNN_VERBOSE names `brg_matmul:avx10_1_512_amx`).
So every number that prices a verify says which path ran: the latency table,
the doctor's costs, bench's environment.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch
from torch import nn

from .packed_linear import FROM_ROWS, packed


@lru_cache(maxsize=1)
def _linux_flags() -> frozenset[str]:
    """The CPU's flags as Linux lists them (torch has no probe for AVX512-FP16); empty elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return frozenset(line.partition(":")[2].split())


def _cpu_has(name: str) -> bool:
    probe = getattr(torch.cpu, f"_is_{name}_supported", None)
    try:
        return bool(probe()) if probe is not None else False
    except RuntimeError:   # pragma: no cover - a build without the probe's backend
        return False


def native_bf16_cpu() -> bool:
    """The CPU multiplies bfloat16 natively (AVX512-BF16 or AMX): bf16 matmuls there beat float32's."""
    return bool(native_bf16_unit())


def native_bf16_unit() -> str:
    """What multiplies bfloat16 on this CPU: 'AMX', 'AVX512-BF16', or '' (emulated)."""
    return "AMX" if _cpu_has("amx_tile") else "AVX512-BF16" if _cpu_has("avx512_bf16") else ""


def kernel_path(dtype: str | torch.dtype, device: str | torch.device, model: nn.Module | None = None) -> str:
    """`fp32: MKL sgemm`, `bf16: oneDNN brgemm (AMX)`, `bf16: emulated (no native bf16 on this CPU)`, `cuda bf16`…

    With the `model` that runs, a float32 one whose passes of several tokens read packed weights
    (packed_linear.py) says so: `fp32: MKL sgemm for 1-3 tokens, oneDNN packed from 4`."""
    name = str(dtype).replace("torch.", "")
    short = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(name, name)
    kind = torch.device(device).type
    if kind != "cpu":
        return f"{short}: {kind} ({'cuBLAS' if kind == 'cuda' else kind})"
    if name == "float32":
        plain = "fp32: MKL sgemm" if torch.backends.mkl.is_available() else "fp32: BLAS sgemm"
        return f"{plain} for 1-{FROM_ROWS - 1} tokens, oneDNN packed from {FROM_ROWS}" if packed(model) else plain
    if not torch.backends.mkldnn.is_available():
        return f"{short}: reference kernels (no oneDNN in this torch build)"
    if name == "bfloat16":
        if _cpu_has("amx_tile"):
            return "bf16: oneDNN brgemm (AMX)"
        if _cpu_has("avx512_bf16"):
            return "bf16: oneDNN (AVX512-BF16)"
        return "bf16: emulated (no native bf16 on this CPU: slower than fp32)"
    if name == "float16":
        if _cpu_has("amx_fp16"):
            return "fp16: oneDNN brgemm (AMX-FP16)"
        if "avx512_fp16" in _linux_flags():
            return "fp16: oneDNN brgemm (AVX512-FP16)"
        return "fp16: converted (no native fp16 matmul on this CPU: slower than fp32)"
    return short


__all__ = ["kernel_path", "native_bf16_cpu", "native_bf16_unit"]
