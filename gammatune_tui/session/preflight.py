"""The model arguments' fast checks, before anything is loaded.

`gammatune chat` loads its models inside the app (in another process, with a
progress bar), so a typo in `--target` used to open the app and fail there.
These checks take milliseconds and raise the same one-line errors loading
would: the options that contradict each other, a preset that does not exist,
a path that is missing or holds no model, a hub id that is not in the local
Hugging Face cache while offline. What only loading can tell (a broken
weight file, tokenizers that differ) is still reported inside the app.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import resources
from ..engine.models import PRESETS, in_local_cache
from ..errors import InvalidParameter, ModelLoadError

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")


def _offline() -> bool:
    v = os.environ.get("HF_HUB_OFFLINE", "") or os.environ.get("TRANSFORMERS_OFFLINE", "")
    return v.strip().lower() in ("1", "true", "yes", "on")


def check_model_ref(ref: str, what: str) -> None:
    """One `--target`/`--draft` value: a directory with a model in it, or a hub id that can be had."""
    path = Path(ref).expanduser()
    if path.is_dir():
        missing = [name for name, ok in (
            ("config.json", (path / "config.json").is_file()),
            ("weights (*.safetensors or *.bin)", any(any(path.glob(p)) for p in WEIGHT_PATTERNS)),
        ) if not ok]
        if missing:
            raise ModelLoadError(f"{what} model {ref!r} is not a model directory: no {' and no '.join(missing)}")
        return
    if path.exists():
        raise ModelLoadError(f"{what} model {ref!r} is a file; give the model's directory or a hub id")
    if ref.startswith((".", "/", "~")) or ref.count("/") > 1 or not _HUB_ID.match(ref):
        raise ModelLoadError(f"{what} model {ref!r}: no such directory")
    if _offline() and not in_local_cache(ref):
        raise ModelLoadError(
            f"{what} model {ref!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
            "download it once while online or pass a local directory"
        )


def check_load_args(load_kwargs: dict[str, Any]) -> None:
    """What `load_pair(**load_kwargs)` would refuse before loading a byte, refused now."""
    target, draft, pair = load_kwargs.get("target"), load_kwargs.get("draft"), load_kwargs.get("pair")
    if pair is not None:
        if target or draft:
            raise InvalidParameter("give either --pair or --target/--draft, not both")
        if pair not in PRESETS:
            raise InvalidParameter(f"unknown pair {pair!r}; expected one of {', '.join(PRESETS)}")
        target, draft = PRESETS[pair].target, PRESETS[pair].draft
    elif target is None and draft is None:
        resources.require_demo_pair()
        return
    elif target is None or draft is None:
        raise InvalidParameter("give both --target and --draft (or --pair, or neither for the demo pair)")
    if load_kwargs.get("quantize") not in (None, "int8", "int4"):
        raise InvalidParameter(f"--quantize must be int8 or int4, got {load_kwargs['quantize']!r}")
    if load_kwargs.get("device_map") not in (None, "auto"):
        raise InvalidParameter(f"--device-map must be 'auto', got {load_kwargs['device_map']!r}")
    check_model_ref(str(target), "target")
    check_model_ref(str(draft), "draft")
