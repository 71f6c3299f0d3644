"""The engine's names and defaults that the command line shows before anything loads.

`--help` and the option declarations need the runner names (`--engine`) and
the draft sources (`--drafter`, its n-gram sizes); the modules that implement
them import torch and transformers. Kept here, in a module that imports
nothing, so parsing a command line costs no torch import (tests/cli/test_lazy_imports.py).
"""

from __future__ import annotations

# how forward passes run (engine/runners/choice.py)
ENGINES: tuple[str, ...] = ("auto", "eager", "static", "graphs")

# who drafts (engine/drafting/draft_sources.py)
MODEL = "model"
PROMPT_LOOKUP = "prompt-lookup"
DRAFTERS: tuple[str, ...] = (MODEL, PROMPT_LOOKUP)

# n-gram sizes of prompt lookup. transformers matches n = max_matching_ngram_size (default 2) down
# to 1; these defaults were picked with the simulator on the demo pair (docs/benchmarks.md,
# "Prompt lookup"): a 1-token match is worth proposing when a wrong window costs one wider verify.
DEFAULT_NGRAM_MIN = 1
DEFAULT_NGRAM_MAX = 3

# a draft built from the target's own weights at load (engine/drafting/self_draft.py): `--draft self:int4[:gN]`
SELF_PREFIX = "self:"
SELF_FORMATS: tuple[str, ...] = ("int4", "int8", "bf16")
SELF_DRAFTS: tuple[str, ...] = tuple(SELF_PREFIX + f for f in SELF_FORMATS)


def is_self_draft(name: object) -> bool:
    """Whether a `--draft` value names a self-draft (`self:…`), valid or not (so a typo is refused as one)."""
    return isinstance(name, str) and name.strip().lower().startswith(SELF_PREFIX)

# the chat's drafter switch, in its palette's order (session/turns.py `switch_drafter`)
CHAT_DRAFTERS: tuple[str, ...] = (MODEL, "self:int8", "self:int4", PROMPT_LOOKUP)
