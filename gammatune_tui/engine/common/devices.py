"""Which device and dtype a pair runs on: `--device` and `--dtype`, resolved once for every command.

`auto` means the fastest sensible choice on this machine (CUDA, else MPS,
else the CPU; bf16 on a GPU that has it, else fp16; fp32 on a CPU, which
load_pair turns into bf16 for a real model where the CPU multiplies bf16
natively: auto_precision.py, decided once the model's size is known). A
device that was asked for but is not there is a one-line InvalidParameter,
never a silent fallback to the CPU.

A CUDA device is always indexed (`cuda:N`; plain `cuda` means the current
device): torch compares devices by type *and* index, so `cuda` and `cuda:0`
are unequal, and a generator made for one refuses tensors on the other.
Anything that asks "are these on the same device?" uses `same_device`.
"""

from __future__ import annotations

import torch

from ...errors import InvalidParameter

_DTYPES = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
}


def _current_cuda_index() -> int:
    return int(torch.cuda.current_device())


def indexed(device: str | torch.device) -> torch.device:
    """The same device with its index spelled out for CUDA (`cuda` -> `cuda:{current}`); others as they are."""
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        return torch.device("cuda", _current_cuda_index())
    return dev


def same_device(a: str | torch.device, b: str | torch.device) -> bool:
    """Same type and same index (an unindexed CUDA device is the current one; the CPU has one)."""
    a, b = torch.device(a), torch.device(b)
    if a.type != b.type:
        return False
    if a.type == "cpu":
        return True
    return indexed(a).index == indexed(b).index if a.type == "cuda" else (a.index or 0) == (b.index or 0)


def resolve_device(device: str | torch.device | None) -> torch.device:
    if device is None or str(device) == "auto":
        if torch.cuda.is_available():
            return indexed("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(str(device))
    except (RuntimeError, ValueError):
        raise InvalidParameter(f"unknown device {device!r}; expected auto, cpu, cuda, cuda:N or mps") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidParameter(f"device {device!r} asked for, but this torch has no CUDA device")
    if dev.type == "cuda":
        dev = indexed(dev)
        count = int(torch.cuda.device_count())
        if dev.index >= count:
            raise InvalidParameter(f"device {device!r} asked for, but this machine has {count} CUDA device(s) "
                                   f"(cuda:0 … cuda:{count - 1})")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise InvalidParameter(f"device {device!r} asked for, but MPS is not available")
    if dev.type not in ("cpu", "cuda", "mps"):
        raise InvalidParameter(f"unsupported device {device!r}; expected auto, cpu, cuda, cuda:N or mps")
    return dev


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None or dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if device.type == "mps":
            return torch.float16
        return torch.float32
    try:
        return _DTYPES[str(dtype).lower()]
    except KeyError:
        raise InvalidParameter(f"unknown dtype {dtype!r}; expected auto, float32, float16 or bfloat16") from None


def cpu_available_bytes() -> int | None:
    """The memory Linux says is available (MemAvailable in /proc/meminfo); None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


__all__ = ["resolve_device", "resolve_dtype", "indexed", "same_device", "cpu_available_bytes"]
