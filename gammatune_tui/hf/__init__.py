"""GammaTune in your own code: gammatune's decoding behind transformers' `generate`.

    from gammatune_tui.hf import gammatune_generate
    out = target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, gamma_method="gammatune+")

Why a floor of its own (`hf/`, beside session/): it is the engine's second
front door, for people who already hold transformers models, and it builds on
the engine alone (no session, render or UI). Named for what it plugs into:
Hugging Face transformers. `generate` is the same without `custom_generate`.
"""

from __future__ import annotations

from pathlib import Path

from .. import resources
from .custom_generate import gammatune_generate, generate


def demo_paths() -> tuple[Path, Path]:
    """(target folder, draft folder) of the demo pair the package ships, for `from_pretrained`."""
    root = resources.require_demo_pair()
    return root / "target", root / "draft"


__all__ = ["gammatune_generate", "generate", "demo_paths"]
