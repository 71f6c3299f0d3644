"""Each draft source's class, bound to its row by import (no "module:Class" strings, no importlib).

The rows themselves (engine/common/names.py `SOURCES`: name, flags,
parameters, help) stay where the command line reads them without importing
torch; this module, which the decoder imports when it builds a session's
source (draft_sources.py `make_source`), names each row's class. The type
checker and the architecture test see every edge. A new source adds its file,
its row and one line here.
"""

from __future__ import annotations

from . import DraftSource
from ..common.names import SOURCES
from .dflash import DFlashSource
from .eagle3 import Eagle3Source
from .gemma4_assistant import Gemma4AssistantSource
from .model_source import ModelDraftSource
from .mtp import MtpSource
from .ngram_pool import NgramPoolSource
from .prompt_lookup import PromptLookupSource

CLASSES: dict[str, type[DraftSource]] = {
    "model": ModelDraftSource,
    "prompt-lookup": PromptLookupSource,
    "ngram-pool": NgramPoolSource,
    "mtp": MtpSource,
    "eagle3": Eagle3Source,
    "dflash": DFlashSource,
    "gemma4-assistant": Gemma4AssistantSource,
}
assert set(CLASSES) == {s.name for s in SOURCES}, "every row has its class, and every class its row"

__all__ = ["CLASSES"]
