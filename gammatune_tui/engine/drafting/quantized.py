"""Weight-only quantized Linear layers over torch's own kernels (int8 per channel, int4 in groups, bf16).

Why these and not a library: a self-draft is only worth having when its
one-token step is much cheaper than the target's, and on the CPU that needs
the weights small *and* a fused kernel that reads them packed. torch ships
those kernels (`aten._weight_int8pack_mm`, `aten._weight_int4pack_mm_for_cpu`
on the CPU, `aten._weight_int4pack_mm` on CUDA), as pytorch-labs/gpt-fast's
quantize.py uses them; torchao's int8 weight-only layer measured no faster
than float32 here and refused its CPU int4 layout, and optimum-quanto is
slower than float32 on a CPU (docs/drafting.md has the numbers).

Only the weights are quantized; activations are bfloat16 inside each matmul
(the int8 kernel with float32 activations takes a slow path: 101 ms vs 20 ms
a step on SmolLM2) and the result is cast back to the caller's dtype, so the
residual stream, the norms, attention and the KV cache keep the model's own
dtype and the embedding can be shared with the target. Quantization is
round-to-nearest: int8 symmetric per output channel, int4 asymmetric per
group of `group` input columns (32 by default; 32, 64, 128 or 256).

A layer whose sizes the kernels cannot take as they are is padded with
zeros (int4: output rows to a multiple of 16, input columns to a whole group;
int8: input columns to a multiple of 16; the input with zeros to match),
which changes no product. A device without the
kernel is refused with one line naming what would work
(`QuantizationUnavailable`), never a traceback.
"""

from __future__ import annotations

import torch
from torch import nn

from ...errors import EngineUnavailable

INT4_GROUPS = (32, 64, 128, 256)   # what the int4 kernels accept
DEFAULT_GROUP = 32
_INT4_N_MULTIPLE = 16              # the CPU packing wants out_features % 16 == 0: padded with zero rows
_INT8_K_MULTIPLE = 16              # the CPU int8 kernel reads input columns 16 at a time: other widths crash or
                                   # return NaN (a 2-wide Linear in Gemma 3n's AltUp), so they are zero-padded


class QuantizationUnavailable(EngineUnavailable):
    """A weight-only kernel that this device, dtype or layer shape cannot run."""


def kernel_missing(kind: str, device: torch.device) -> str | None:
    """Why `kind` (int8, int4, bf16) cannot run on `device` with this torch build, or None.

    Asked of torch's dispatcher (is a kernel registered for this device?), not
    guessed from versions: a CPU-only build has no CUDA kernels at all.
    """
    if kind == "bf16":
        return None
    if kind not in ("int8", "int4"):
        return f"unknown weight format {kind!r}"
    key = {"cpu": "CPU", "cuda": "CUDA", "mps": "MPS"}.get(device.type)
    ops = ["_weight_int8pack_mm"] if kind == "int8" else (
        ["_convert_weight_to_int4pack_for_cpu", "_weight_int4pack_mm_for_cpu"] if device.type == "cpu"
        else ["_convert_weight_to_int4pack", "_weight_int4pack_mm"])
    for op in ops:
        if key is None or not _has_kernel(op, key):
            return f"this torch has no {op} kernel for {device.type}"
    return None


def _has_kernel(op: str, key: str) -> bool:
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", key))
    except Exception:   # pragma: no cover - a torch without the dispatcher query: try the op's presence
        return hasattr(torch.ops.aten, op)


class WeightOnlyLinear(nn.Module):
    """y = x · Wᵀ + b with W stored as int8 (per-channel scales), packed int4 (grouped) or bfloat16.

    The packed weights are buffers (`packed`), not parameters: the layer is for
    inference only, and a model's parameter count stays that of its float layers.
    `weight` is what a model reading it expects — the dequantized matrix in the
    original dtype, computed through the kernel itself — and each read is
    counted (`weight_reads`): some families read a layer's weight instead of
    calling it (Mamba casts its input to `lm_head.weight.dtype`), and the
    self-draft keeps those layers at the target's precision.
    `computes_in` tells the runners' self-checks which tolerance a model made
    of these layers is held to (common/logits_check.py `compute_dtype`).
    """

    computes_in = torch.bfloat16

    # buffers (register_buffer), typed for the checker: a module's own lookup says Tensor | Module
    packed: torch.Tensor
    scales: torch.Tensor
    scales_and_zeros: torch.Tensor

    def __init__(self, linear: nn.Linear, kind: str, group: int = DEFAULT_GROUP):
        super().__init__()
        w = linear.weight.detach()
        self.kind, self.group, self.k_pad, self.dtype, self.weight_reads = kind, group, 0, w.dtype, 0
        self.in_features, self.out_features = int(w.shape[1]), int(w.shape[0])
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
        device = w.device
        why = kernel_missing(kind, device)
        if why:
            raise QuantizationUnavailable(f"self:{kind} on {device.type}: {why}; "
                                          f"{_what_works(device)}")
        wf = w.float()
        if kind == "bf16":
            self.register_buffer("packed", w.to(torch.bfloat16).contiguous())
        elif kind == "int8":
            scales = wf.abs().amax(dim=1).clamp(min=1e-8) / 127.0
            q = torch.round(wf / scales[:, None]).clamp(-128, 127).to(torch.int8)
            self.k_pad = (-self.in_features) % _INT8_K_MULTIPLE
            if self.k_pad:
                q = torch.cat([q, q.new_zeros(self.out_features, self.k_pad)], 1)
            self.register_buffer("packed", q.contiguous())
            self.register_buffer("scales", scales.to(torch.bfloat16))
        elif kind == "int4":
            if group not in INT4_GROUPS:
                raise QuantizationUnavailable(f"int4 groups must be one of {', '.join(map(str, INT4_GROUPS))}, "
                                              f"got {group}")
            self.k_pad = (-self.in_features) % group   # zero columns (and zero inputs) to a whole group
            if self.k_pad:
                wf = torch.cat([wf, wf.new_zeros(self.out_features, self.k_pad)], 1)
            packed, sz = _pack_int4(wf, group, device)
            self.register_buffer("packed", packed)
            self.register_buffer("scales_and_zeros", sz)
        else:
            raise QuantizationUnavailable(f"unknown weight format {kind!r}; expected int8, int4 or bf16")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        y = self._product(x.reshape(-1, shape[-1])).to(x.dtype).reshape(*shape[:-1], self.out_features)
        return y if self.bias is None else y + self.bias

    @property
    def weight(self) -> torch.Tensor:
        """The dequantized (out_features, in_features) matrix, in the original dtype (x·I through the kernel)."""
        self.weight_reads += 1
        eye = torch.eye(self.in_features, device=self.packed.device)
        return self._product(eye).t().to(self.dtype)

    def _product(self, x: torch.Tensor) -> torch.Tensor:
        """x · Wᵀ for a (rows, in_features) input, in bfloat16, without the bias."""
        # the kernels read their input as one dense row-major matrix: a strided view (a transposed or
        # sliced activation, as RecurrentGemma passes) is copied, never misread
        a = x.to(torch.bfloat16).contiguous()
        if self.k_pad:
            a = torch.nn.functional.pad(a, (0, self.k_pad))
        if self.kind == "int8":
            return torch.ops.aten._weight_int8pack_mm(a, self.packed, self.scales)
        if self.kind == "int4":
            if a.device.type == "cpu":
                y = torch.ops.aten._weight_int4pack_mm_for_cpu(a, self.packed, self.group, self.scales_and_zeros)
            else:
                y = torch.ops.aten._weight_int4pack_mm(a, self.packed, self.group, self.scales_and_zeros)
            return y[:, : self.out_features] if y.shape[-1] != self.out_features else y
        return a @ self.packed.t()

    def extra_repr(self) -> str:
        fmt = f"int4 g{self.group}" if self.kind == "int4" else self.kind
        return f"in_features={self.in_features}, out_features={self.out_features}, weights={fmt}"


def _pack_int4(w: torch.Tensor, group: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Asymmetric round-to-nearest in groups (gpt-fast's layout): packed weight and (groups, N, 2) scales/zeros."""
    n, k = w.shape
    pad = (-n) % _INT4_N_MULTIPLE
    if pad:
        w = torch.cat([w, w.new_zeros(pad, k)])
    g = w.reshape(-1, group)
    lo, hi = g.amin(dim=1, keepdim=True), g.amax(dim=1, keepdim=True)
    scales = ((hi - lo).clamp(min=1e-6) / 15).to(torch.bfloat16)
    zeros = (lo + scales.float() * 8).to(torch.bfloat16)   # the kernels read w = (q - 8)·scale + zero
    lo_b = zeros.float() - scales.float() * 8               # quantized against the rounded scales they will use
    q = ((g - lo_b) / scales.float()).round().clamp(0, 15).to(torch.int32).reshape(w.shape)
    sz = torch.cat([scales.reshape(w.shape[0], -1, 1), zeros.reshape(w.shape[0], -1, 1)], 2).transpose(0, 1)
    if device.type == "cpu":
        packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q.contiguous(), 1)
    else:   # CUDA: two 4-bit values a byte, then the kernel's tiled layout
        u8 = (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)
        packed = torch.ops.aten._convert_weight_to_int4pack(u8.contiguous(), 8)
    return packed, sz.contiguous()


def _what_works(device: torch.device) -> str:
    ok = [k for k in ("int4", "int8", "bf16") if kernel_missing(k, device) is None]
    return f"self:{', self:'.join(ok)} can run here" if ok else "no weight-only format can run here"


__all__ = ["WeightOnlyLinear", "QuantizationUnavailable", "kernel_missing", "INT4_GROUPS", "DEFAULT_GROUP"]
