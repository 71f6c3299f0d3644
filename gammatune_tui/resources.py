"""Where the shipped data lives: top-level folders in a checkout, `_data/` inside a wheel."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`themes` or `demo_prompts`, from the installed wheel or from the source tree."""
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gammatune's {name}/ folder is missing from this installation")


def themes_dir() -> Path:
    return data_dir("themes")


def demo_prompts_dir() -> Path:
    return data_dir("demo_prompts")
