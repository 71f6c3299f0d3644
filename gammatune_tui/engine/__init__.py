"""The engine: no Textual, no Rich, importable in a notebook.

The public names load on first use (PEP 562), so importing one light module
of the engine (policies, names, presets) does not import torch: the command
line parses, prints `--help` and refuses a bad flag before torch loads.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "METHODS", "Policy", "PolicySettings", "make_policy", "SamplingConfig",
    "SessionHeader", "StepEvent", "SessionSummary", "DraftedToken", "EmittedToken", "TargetToken",
    "SpeculativeDecoder", "ModelPair", "load_pair", "with_draft", "DRAFTERS", "DrafterSettings",
]


def __getattr__(name: str) -> Any:
    if name in ("SpeculativeDecoder", "with_draft"):   # the decoder that resolves a self-draft drafter first
        from .loading import siblings
        return getattr(siblings, name)
    if name in ("ModelPair", "load_pair"):
        from .loading import models
        return getattr(models, name)
    if name == "DrafterSettings":
        from .drafting.draft_sources import DrafterSettings
        return DrafterSettings
    if name == "DRAFTERS":
        from .common.names import DRAFTERS
        return DRAFTERS
    if name in ("METHODS", "Policy", "PolicySettings", "make_policy"):
        from . import policies
        return getattr(policies, name)
    if name == "SamplingConfig":
        from .common.sampling_config import SamplingConfig
        return SamplingConfig
    if name in ("SessionHeader", "StepEvent", "SessionSummary", "DraftedToken", "EmittedToken", "TargetToken"):
        from . import events
        return getattr(events, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
