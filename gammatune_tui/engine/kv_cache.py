"""The two KV caches of a session: filled once from the prompt, cropped after every step.

Cache discipline (the part that makes decoding fast and exact): both models
keep a `DynamicCache` for the whole session. After every step the target's
cache holds exactly the accepted sequence minus its last token (that token
has no KV entry yet and opens the next verification window); the draft's
cache holds the same or one token less (after a fully accepted window the
last drafted token was never fed to the draft; it is fed together with the
target's bonus token at the next step, as transformers does). Rejected
tokens are cropped from both caches before the step's event is emitted; the
prefix is never run again.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache


def cached_length(cache: DynamicCache | None) -> int:
    return cache.get_seq_length() if cache is not None else 0


def prefill(tfwd: Any, dfwd: Any, ids: list[int], tcache: DynamicCache, dcache: DynamicCache,
            device: torch.device) -> None:
    """Cache all prompt tokens but the last, which opens the first verification window."""
    if len(ids) > 1:
        prefix = torch.tensor([ids[:-1]], device=device)
        tfwd(prefix, tcache, 1)
        dfwd(prefix, dcache, 1)


def rewind(tcache: DynamicCache, dcache: DynamicCache, keep_len: int, target_end: int) -> None:
    """Crop both caches to `keep_len` tokens; `target_end` is what the target cached while verifying."""
    drop_t = target_end - keep_len
    if drop_t > 0:
        tcache.crop(-drop_t)
    d_now = dcache.get_seq_length()
    if d_now > keep_len:
        dcache.crop(-(d_now - keep_len))


__all__ = ["cached_length", "prefill", "rewind"]
