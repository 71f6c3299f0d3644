"""The `static` runner: KV buffers preallocated once, written at explicit positions, rewound for free.

transformers' DynamicCache concatenates every step (copying the whole prefix
per layer) and crops by slicing; a static cache writes the new keys and
values in place and rewinds by setting a length, so a rejected draft costs
nothing to undo. The buffers live in an nn.Module as registered buffers
(`StaticKV`), as gpt-fast keeps them: torch.compile and CUDA graphs need
tensors whose addresses never change.

The model's own modules do the work (embeddings, rotary table, decoder
layers, final norm, LM head): `StaticKV` is handed to each layer as its
`past_key_values` (or `cache`, as the installed transformers names it), and transformers' Llama/Qwen2 attention calls
`.update(k, v, layer_idx)` and attends over what it returns.
Two ways to answer that call:

* prefix mode (this runner): write at positions start…end−1 by slicing and
  return the filled prefix [0, end); the mask is an explicit causal one over it.
* fixed mode (the graphs runner's step, `fixed_step.py`): the layers written
  out over the same modules, writing at the positions held in a tensor
  (`index_copy_`) and attending over a length bucket of the buffers behind a
  position mask (key j visible to query i iff j <= pos[i]). Every shape is
  fixed by (q, bucket), nothing reads a value back to the host, so the step
  can be captured in a CUDA graph.

Stale keys beyond the length (rejected drafts) stay in the buffers but are
never visible: prefix mode never returns them and fixed mode masks them.
Buffers start as zeros so a masked position never holds NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from .base import Runner, grad_mode
from .fixed_step import FixedStep
from .prefix_pass import Stack, prefix_pass

if TYPE_CHECKING:
    from transformers import PreTrainedModel

GRANULE = 256  # capacities are rounded up to this many tokens (fewer re-allocations and re-captures)
DEFAULT_CAPACITY = 1024  # what warm-up allocates: most sessions fit without growing


def round_capacity(n: int) -> int:
    return max(GRANULE, -(-int(n) // GRANULE) * GRANULE)


class LayerKV(nn.Module):
    k: torch.Tensor   # buffers (register_buffer), typed for the checker: a module's own lookup says Tensor | Module
    v: torch.Tensor

    def __init__(self, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device):
        super().__init__()
        self.register_buffer("k", torch.zeros(shape, dtype=dtype, device=device), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype, device=device), persistent=False)


class StaticKV(nn.Module):
    """Every layer's K/V buffers (1, kv_heads, capacity, head_dim), and where the current call writes."""

    key_pos: torch.Tensor   # a buffer: 0 … capacity − 1 on the device

    def __init__(self, n_layers: int, kv_heads: int, head_dim: int, capacity: int, dtype: torch.dtype,
                 device: torch.device):
        super().__init__()
        shape = (1, kv_heads, capacity, head_dim)
        layers = [LayerKV(shape, dtype, device) for _ in range(n_layers)]
        self.kv_layers = nn.ModuleList(layers)
        self.register_buffer("key_pos", torch.arange(capacity, device=device), persistent=False)
        self.capacity = capacity
        # the same tensors as plain lists: `update` runs once per layer per pass, and a module's
        # buffer lookup costs more than the copy it guards on small models
        self._ks = [lay.k for lay in layers]
        self._vs = [lay.v for lay in layers]
        self._start = 0
        self._end = 0

    def write_prefix(self, start: int, end: int) -> None:
        """Next calls write positions start…end−1 and return the prefix [0, end)."""
        self._start, self._end = start, end

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = self._ks[layer_idx], self._vs[layer_idx]
        start, end = self._start, self._end
        k[:, :, start:end] = key_states
        v[:, :, start:end] = value_states
        return k[:, :, :end], v[:, :, :end]

    def copy_prefix_from(self, other: "StaticKV", n: int) -> None:
        for mine, theirs in zip(self._ks + self._vs, other._ks + other._vs):
            mine[:, :, :n].copy_(theirs[:, :, :n])

    def layer(self, i: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Layer `i`'s keys and values of the first `length` positions."""
        return self._ks[i][:, :, :length], self._vs[i][:, :, :length]


class StaticRunner(Runner):
    """Llama/Qwen2 stacks over a StaticKV; `forward` runs the prefix-mode step."""

    kind = "static"

    def __init__(self, model: PreTrainedModel):
        super().__init__(model)
        cfg = model.config
        self.stack = Stack.of(model)
        self.layers = list(self.stack.layers)
        self.embed, self.rotary, self.norm, self.head = self.stack.embed, self.stack.rotary, self.stack.norm, self.stack.head
        self.kv_heads = int(getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        self.dtype = self.embed.weight.dtype
        self.mode = grad_mode(model)
        self.cache: StaticKV | None = None
        self._length = 0
        self._fixed: FixedStep | None = None
        self.allocations = 0  # how many times buffers were (re)allocated: tests and the inspector read it

    # -- the cache ---------------------------------------------------------------------
    @property
    def length(self) -> int:
        return self._length

    @property
    def capacity(self) -> int | None:
        return self.cache.capacity if self.cache is not None else 0

    def start(self, capacity: int, gamma_max: int | None = None) -> None:
        if self.cache is None or self.cache.capacity < capacity:
            self._allocate(round_capacity(capacity), keep=0)
        self._length = 0

    def rewind(self, length: int) -> None:
        self._check_rewind(length)
        self._length = length

    def kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        assert self.cache is not None
        return self.cache.layer(layer, self._length)

    def _allocate(self, capacity: int, keep: int) -> None:
        """New buffers of `capacity` tokens holding the first `keep` tokens of the old ones."""
        with torch.inference_mode(False), torch.no_grad():  # plain tensors: writable in any grad mode
            new = StaticKV(len(self.layers), self.kv_heads, self.head_dim, capacity, self.dtype, self.device)
            if keep and self.cache is not None:
                new.copy_prefix_from(self.cache, keep)
        self.cache = new
        self.allocations += 1
        self._on_allocate()

    def _on_allocate(self) -> None:
        """Hook: what depends on the buffers' addresses (captured graphs) is dropped here."""

    def _ensure(self, end: int) -> None:
        """A session that outgrows the buffers grows them (at least by half), keeping what is cached."""
        assert self.cache is not None, "start() a session first"
        if end > self.cache.capacity:
            self._allocate(round_capacity(max(end, self.cache.capacity * 3 // 2)), keep=self._length)

    # -- forward passes ------------------------------------------------------------------
    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        q = int(ids.shape[1])
        start = self._length
        self._ensure(start + q)
        with self.mode():
            if self.tapper is None:
                logits = self._step(ids, start, q, keep)
            else:
                with self.tapper.pass_of(q):
                    logits = self._step(ids, start, q, keep)
        self._length = start + q
        return logits

    def _step(self, ids: torch.Tensor, start: int, q: int, keep: int) -> torch.Tensor:
        return self.prefix_step(ids, start, q, keep)

    def prefix_step(self, ids: torch.Tensor, start: int, q: int, keep: int) -> torch.Tensor:
        """Attention over the filled prefix [0, start+q) with an explicit causal mask (prefix_pass.py)."""
        assert self.cache is not None
        self.cache.write_prefix(start, start + q)
        return prefix_pass(self.stack, ids, self.cache, start, keep, self.cache.key_pos)

    def fixed_step(self, ids: torch.Tensor, pos: torch.Tensor, span: int | None = None) -> torch.Tensor:
        """The graphs runner's step (fixed_step.py): ids (1, q) at positions pos (q,), attention over `span` keys.

        `span` (a length bucket, default: the whole capacity) must cover every
        position in `pos`. All logits (q, vocab) are returned. Only device work,
        fixed shapes, no value read back to the host: what a CUDA graph captures.
        """
        assert self.cache is not None
        if self._fixed is None:
            self._fixed = FixedStep(self)
        return self._fixed(ids, pos, self.cache.capacity if span is None else span)


__all__ = ["StaticKV", "StaticRunner", "round_capacity", "DEFAULT_CAPACITY", "GRANULE"]
