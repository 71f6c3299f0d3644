"""What `--dtype auto` runs a model at on a CPU: bfloat16 where the CPU multiplies it natively and the model is real.

Why. A speculative step pays when its k-token verify costs little more than
one step. In float32 on a CPU it does not (MKL's sgemm prices k rows near k
one-row products; packed weights bring SmolLM2's c(5) from 1.73 to 1.38), in
bfloat16 on a CPU with AVX512-BF16 or AMX it does (oneDNN: c(5) 1.09), and a
bfloat16 step reads half the bytes. Measured on SmolLM2-135M with its int4
self-draft (docs/benchmarks-self-draft.md, a 2-core Xeon with AMX, 6 prompts):
`compare` ran 1.46x / 1.38x target-only at T 0 / 0.7 in bfloat16 on both sides,
1.33x / 1.21x in float32. llama.cpp runs a checkpoint at its stored precision
and IPEX picks bfloat16 on such CPUs; a GPU's auto is bfloat16 already.

So auto picks bfloat16 on a CPU for a model whose weight matrices hold at
least `MIN_BYTES` in float32 (the size where weights stream from memory, the
same line the packed verify draws), where the CPU has native bfloat16. The
size is read from the checkpoint's safetensors headers before anything loads
(loading/model_files.py `matrix_bytes`), so the model loads at bfloat16 as
`--dtype bfloat16` loads it: modules a model keeps in float32 stay so, and so
do buffers such as the rotary frequencies. A checkpoint whose headers cannot
be read first (a hub model fetched by this very load) stays float32. Smaller
models (the demo pair, test models) stay float32: their weights sit in cache,
where bfloat16's conversions cost more than they save. So does every model on
a CPU without native bfloat16, where it is emulated and slower.

What it changes. Greedy text is bfloat16's: a k-token verify rounds
differently from a one-token step, so a near-tie (top two logits within
bfloat16's rounding) can flip; `compare`, `chat` and `bench` name each such
difference as a near-tie and keep "NOT lossless" for a real one
(session/lossless.py). `--dtype float32` gives target.generate's exact text.
The header says which precision ran and why.
"""

from __future__ import annotations

import torch

from .kernel_path import native_bf16_unit
from .packed_linear import MIN_BYTES


def auto_cpu_dtype(matrix_bytes: int | None) -> tuple[torch.dtype, str]:
    """The dtype `--dtype auto` loads a model whose weight matrices hold `matrix_bytes` in float32 (None: unknown)
    at on this CPU, and why in a few words ('' where it stays float32: the choice needs no saying)."""
    unit = native_bf16_unit()
    if not unit or not torch.backends.mkldnn.is_available() or matrix_bytes is None or matrix_bytes < MIN_BYTES:
        return torch.float32, ""
    return torch.bfloat16, f"auto for this CPU's {unit}"


__all__ = ["auto_cpu_dtype"]
