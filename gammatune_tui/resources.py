"""Where the shipped data lives: themes, prompt sets and the embedded demo pair.

Top-level folders in a checkout, `_data/` inside a wheel; the demo pair sits
in the package itself. The one place every floor asks — the engine included,
which must not import `demo/` — so there is one answer to "is the demo pair
installed".
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ModelLoadError

CACHE_ENV = "GAMMATUNE_CACHE_DIR"

_PKG = Path(__file__).resolve().parent

DEMO_PAIR_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                   "tokenizer_config.json")
"""What each of the demo pair's two model folders (target/, draft/) must hold."""


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


def cache_root() -> Path:
    """gammatune's cache: `$GAMMATUNE_CACHE_DIR`, else `$XDG_CACHE_HOME/gammatune`, else `~/.cache/gammatune`.

    Bench keeps its traces there (traces/), the engine its converted GGUF models (gguf/).
    """
    own = os.environ.get(CACHE_ENV, "").strip()
    if own:
        return Path(own).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "gammatune"


def demo_pair_dir() -> Path:
    """The embedded demo pair: target/ and draft/ model folders."""
    return _PKG / "demo" / "pair"


def demo_pair_installed(root: Path | None = None) -> bool:
    """Both model folders complete: configs, safetensors weights and tokenizer."""
    root = root or demo_pair_dir()
    return all((root / sub / f).is_file() for sub in ("target", "draft") for f in DEMO_PAIR_FILES)


def require_demo_pair() -> Path:
    """The demo pair's folder, or a one-line ModelLoadError that says how to pass another pair."""
    root = demo_pair_dir()
    if not demo_pair_installed(root):
        raise ModelLoadError(
            f"the embedded demo pair is not installed ({root}); pass a pair with --target DIR --draft DIR "
            "(a target and a draft that share a tokenizer) or --pair NAME (see `gammatune models`)"
        )
    return root
