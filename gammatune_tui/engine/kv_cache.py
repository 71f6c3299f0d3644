"""The two KV caches of a session: filled once from the prompt, rewound after every step.

Cache discipline (the part that makes decoding fast and exact): each model's
runner keeps its cache for the whole session. After every step the target's
cache holds exactly the accepted sequence minus its last token (that token
has no KV entry yet and opens the next verification window); the draft's
cache holds the same or one token less (after a fully accepted window the
last drafted token was never fed to the draft; it is fed together with the
target's bonus token at the next step, as transformers does). Rejected
tokens are rewound from both caches before the step's event is emitted; the
prefix is never run again, except that a hybrid model's runner feeds the
accepted tokens of a rejected window once more (its recurrent state cannot be
cropped; runners/recurrent.py). How a runner rewinds (a crop, setting a length
over static buffers, restoring a snapshot) is its own business. A model-free draft source (prompt
lookup) has no cache: `draft` is None and only the target's is kept.
"""

from __future__ import annotations

import torch

from .runners import Runner


def prefill(target: Runner, draft: Runner | None, ids: list[int], device: torch.device) -> None:
    """Cache all prompt tokens but the last, which opens the first verification window."""
    if len(ids) > 1:
        prefix = torch.tensor([ids[:-1]], device=device)
        target.prefill(prefix)
        if draft is not None:
            draft.prefill(prefix)


def rewind(target: Runner, draft: Runner | None, keep_len: int) -> None:
    """Both caches back to at most `keep_len` tokens (the accepted sequence minus its last token)."""
    if target.length > keep_len:
        target.rewind(keep_len)
    if draft is not None and draft.length > keep_len:
        draft.rewind(keep_len)


__all__ = ["prefill", "rewind"]
