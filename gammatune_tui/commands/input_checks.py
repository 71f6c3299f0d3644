"""Checks of what a user can type that the parser alone would accept, run before any model loads.

Each refuses nonsense with one line and exit status 2 instead of letting it
pass silently: an empty `--methods` that would quietly mean "all", a repeat
count that would run for ever, a theme that `--print` never looks at, an
environment variable the engine reads only on some paths (so a typo in it
was ignored on others).
"""

from __future__ import annotations

import os
from typing import Optional

from ..errors import InvalidParameter

MAX_REPEATS = 100   # compare and bench run every method this many times: far beyond a useful spread
ENGINE_ENV = ("GAMMATUNE_ATTENTION", "GAMMATUNE_COMPILE", "GAMMATUNE_PACKED_VERIFY")


def check_methods_text(methods: Optional[str], flag: str = "--methods") -> None:
    """An empty --methods is refused (the engine's parse_methods reads blank as "all", which is for the API)."""
    if methods is not None and not methods.strip():
        raise InvalidParameter(f"{flag} is empty: give a comma-separated list of methods, or all")


def check_repeats(repeats: int, flag: str = "--repeats") -> None:
    if repeats < 1 or repeats > MAX_REPEATS:
        raise InvalidParameter(f"{flag} must be a whole number from 1 to {MAX_REPEATS}, got {repeats}")


def check_theme(name: Optional[str]) -> None:
    """--theme names a shipped or user theme; a user theme file that failed to load is named with its fault."""
    if name is None:
        return
    from ..ui.themes import ThemeError, load_themes

    themes, warnings = load_themes()
    if name in themes:
        return
    broken = [w for w in warnings if f"{name}.json" in w]
    if broken:
        raise ThemeError(f"--theme {name}: {broken[0]}")
    folder = [w for w in warnings if w.startswith("GAMMATUNE_THEMES=")]
    raise ThemeError(f"unknown theme {name!r}; available: {', '.join(sorted(themes))}"
                     + (f" ({folder[0]})" if folder else ""))


def check_engine_environment() -> None:
    """GAMMATUNE_ATTENTION, GAMMATUNE_COMPILE and GAMMATUNE_PACKED_VERIFY, when set, hold values the engine knows
    (read as it would)."""
    if not any(os.environ.get(k) for k in ENGINE_ENV):
        return   # nothing to check, and no torch to import for it
    import torch

    from ..engine.common.packed_linear import pack_setting
    from ..engine.runners.fixed_step import attention_path, compile_wanted

    attention_path()
    compile_wanted(torch.device("cpu"))
    pack_setting()
