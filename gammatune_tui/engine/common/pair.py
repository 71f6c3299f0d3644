"""What the engine, the sessions and the benchmark read of a model pair: the `Pair` protocol.

`ModelPair` (models.py) is the pair `load_pair` gives, and satisfies it; so
may a pair-like object of a user's (the public API documents `.target`,
`.draft`, `.tokenizer` and `.device`), which is why the pair is typed by
this protocol rather than by the dataclass. The attributes below the line
are optional: a pair-like object may lack them, and their readers say what
stands in (`getattr` with a default), so only the core is read directly.
Kept in a module that imports nothing heavy, so every floor can name it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:   # annotations only: no torch at import
    import torch


class Pair(Protocol):
    """A target, a draft that shares its vocabulary (None when a pair drafts by prompt lookup), a tokenizer."""

    target: Any
    draft: Any
    tokenizer: Any
    device: "torch.device"
    eos_ids: frozenset[int]

    def encode_prompt(self, prompt: str | Sequence[int] | Sequence[dict], raw: bool = False) -> list[int]: ...

    # optional (read with getattr and a default): name_target, name_draft, is_demo, dtype, engine, warmup_s,
    # load_s, drafter, runner_pool, runner — what ModelPair adds for headers, reports and runner reuse


__all__ = ["Pair"]
