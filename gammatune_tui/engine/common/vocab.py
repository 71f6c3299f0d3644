"""The token ids both models of a pair speak: one rule, so every loop cuts its logits at the same id.

A draft and its target may differ in vocabulary size by padding only (rows
past the tokenizer's ids that no text uses); speculation compares the two
laws over the ids both have, and the plain baseline chooses among the same
ids so that its text is the one every lossless method must reproduce.
Without a draft model (prompt lookup drafts from the text) the target's own
vocabulary is the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def shared_vocab(target: PreTrainedModel, draft: PreTrainedModel | None) -> int:
    """How many ids, from 0, both `target` and `draft` (None: no draft model) have rows for."""
    if draft is None:
        return int(target.config.vocab_size)
    return min(int(target.config.vocab_size), int(draft.config.vocab_size))


__all__ = ["shared_vocab"]
