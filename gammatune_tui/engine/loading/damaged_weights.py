"""Weight files that cannot be whole, found from their headers before transformers reads them.

A download cut short or a copy that ran out of disk leaves a
`model.safetensors` shorter than its own header says; safetensors then
fails deep inside `from_pretrained` with a traceback about "incomplete
metadata". Reading the header (a length and a small JSON table of tensor
offsets) costs microseconds and tells the user which file is damaged and
how. The GGUF conversion cache uses the same test to convert again instead
of failing on every start.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

MAX_HEADER = 100 * 1024 * 1024   # safetensors' own limit on the header's size


def safetensors_fault(path: Path) -> str | None:
    """Why a .safetensors file cannot be whole (cut short, not safetensors at all), or None; reads its header only."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                return f"only {size} bytes, not a safetensors file (cut short?)"
            n = struct.unpack("<Q", head)[0]
            if n > MAX_HEADER or 8 + n > size:
                return f"cut short or not a safetensors file ({size} bytes; its header alone would need {8 + n})"
            header = json.loads(fh.read(n))
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except (ValueError, UnicodeDecodeError):
        return "its header is not valid JSON: damaged, or not a safetensors file"
    if not isinstance(header, dict):
        return "its header is not a table of tensors: damaged, or not a safetensors file"
    try:
        end = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    except (KeyError, TypeError, ValueError, IndexError):
        return "its header's tensor offsets are unreadable: damaged, or not a safetensors file"
    if 8 + n + end > size:
        return f"cut short: {size} bytes where its header says {8 + n + end} (download or copy it again)"
    return None


def first_damaged(folder: Path) -> tuple[Path, str] | None:
    """The first damaged .safetensors file in a model folder, with its fault; None when all look whole."""
    for f in sorted(Path(folder).glob("*.safetensors")):
        fault = safetensors_fault(f)
        if fault is not None:
            return f, fault
    return None


__all__ = ["first_damaged", "safetensors_fault"]
