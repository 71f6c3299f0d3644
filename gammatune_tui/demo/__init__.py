"""The embedded demo pair: a tiny target/draft pair trained on the Python standard library's source.

It ships inside the package so every command works offline on a machine with
no GPU. `train.py` is the recipe that made it; `measure.py` checks it.
"""

from __future__ import annotations

from pathlib import Path

PAIR_DIR = Path(__file__).parent / "pair"
TARGET_DIR = PAIR_DIR / "target"
DRAFT_DIR = PAIR_DIR / "draft"

_REQUIRED = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def is_installed() -> bool:
    """True when both model directories are complete (weights, configs, tokenizer)."""
    return all((d / f).is_file() for d in (TARGET_DIR, DRAFT_DIR) for f in _REQUIRED)
