"""The runner seam: one model's forward passes and its KV cache, behind one small interface.

The decoder's loop (draft → verify → accept → rewind → event) is the same
whichever way a model is run; what differs is how a forward pass is launched
and how the cache is kept. A runner owns both, so the decoder never touches
a cache object and cannot tell an eager DynamicCache from preallocated
static buffers replayed through CUDA graphs.

Contract, for every runner:
  start(capacity, gamma_max=None)
                       a new session: the cache is empty; room for `capacity` tokens
                       (more is allowed: a runner grows if a session outgrows it);
                       `gamma_max` bounds the session's windows (the graphs runner
                       captures every window up to it here, never mid-answer)
  prefill(ids)         cache a prompt (1, n); nothing is returned
  forward(ids, keep)   append ids (1, q) at positions length … length+q−1 and return
                       the logits of the last `keep` of them, (keep, vocab); the
                       tensor is the caller's (it is not overwritten by the next call)
  rewind(n)            forget everything after the first n tokens (n <= length)
  length               tokens cached now
  kv(layer)            (keys, values) of the cached prefix, (1, kv_heads, length, head_dim),
                       for tests and inspection
  read_target(reads)   from now on keep the hidden rows `reads` names (hidden.py) of every
                       forward's positions in `hidden` ((q, reads.count, hidden_size), the
                       prefill's too); None: keep nothing (the default, and free)
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Callable, Protocol, cast

import torch

from ..common.model_weights import quanto_quantized
from .hidden import Tapper, TargetReads

if TYPE_CHECKING:
    from transformers import PreTrainedModel


class Runner:
    """Base of the runners; see the module docstring for the contract."""

    kind: str = "?"
    tapper: Tapper | None = None   # set by read_target: the rows a draft source reads

    def __init__(self, model: PreTrainedModel):
        self.model = model
        self.device = next(model.parameters()).device

    def read_target(self, reads: TargetReads | None) -> None:
        """Keep the rows `reads` names from every later forward (hidden.py), or, with None, stop."""
        self.tapper = Tapper(self.model, reads) if reads is not None and reads.count else None

    @property
    def hidden(self) -> torch.Tensor | None:
        """The rows `read_target` asked for, of every position of the last forward (or prefill)."""
        return self.tapper.rows if self.tapper is not None else None

    @property
    def length(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def capacity(self) -> int | None:
        """Tokens the cache holds without growing; None where it has no fixed size."""
        return None

    def start(self, capacity: int, gamma_max: int | None = None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def prefill(self, ids: torch.Tensor) -> None:
        self.forward(ids, 1)

    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def rewind(self, length: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_rewind(self, length: int) -> None:
        if not (0 <= length <= self.length):
            raise ValueError(f"cannot rewind a cache of {self.length} tokens to {length}")


Forward = Callable[[torch.Tensor, Any, int], torch.Tensor]
"""fwd(ids (1, n), cache, keep) -> the last `keep` rows of logits (keep, vocab): one pass of a model over its cache."""
GradMode = Callable[[], AbstractContextManager[Any]]
"""torch.no_grad or torch.inference_mode: called, the context a forward runs in."""


class AttentionLayer(Protocol):
    """A filled attention layer of a transformers cache: what `kv` reads (a cache's layers are typed as any
    kind, linear-attention ones without keys too)."""

    keys: torch.Tensor
    values: torch.Tensor


def layer_kv(layer: object) -> tuple[torch.Tensor, torch.Tensor]:
    """(keys, values) of a cache layer that `kv` asks for: an attention layer, filled."""
    lay = cast(AttentionLayer, layer)
    return lay.keys, lay.values


def grad_mode(model: torch.nn.Module) -> GradMode:
    """inference_mode where it is safe, else no_grad (optimum-quanto's int4 kernels fail under inference_mode)."""
    return torch.no_grad if quanto_quantized(model) else torch.inference_mode


__all__ = ["Runner", "grad_mode"]
