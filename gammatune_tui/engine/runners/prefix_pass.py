"""The one forward beyond transformers' own that two runners share: a Llama/Qwen2 stack run module by module.

For small models on a CPU, transformers' wrappers around the layers (output
capturing, generic mask construction, output dataclasses) cost as much as the
layers themselves. Run the model's own modules directly instead: embeddings,
the rotary table, each decoder layer with an explicit causal mask, the final
norm and the LM head on the kept positions only. The cache is whatever the
runner keeps: the eager runner's DynamicCache (fast_forward.py) or the static
runner's preallocated buffers (static.py); each layer calls its `.update`.

The graphs runner's fixed-shape step (fixed_step.py) is the only other copy of
the stack, because a CUDA graph needs every shape fixed and nothing read back
to the host; this pass reads the prefix length on the host.
Measured (docs/history/README.md, "… what the direct path earns"):
on the demo pair the eager runner runs ~9–11 % more tokens per CPU-second with
this pass than with the model's own forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import torch

from .hf_compat import cache_kw

if TYPE_CHECKING:
    from transformers import PreTrainedModel


class LayerCache(Protocol):
    """What a decoder layer calls on the cache it is handed: transformers' DynamicCache, or static.py's StaticKV."""

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor,
               layer_idx: int) -> tuple[torch.Tensor, torch.Tensor]: ...


@dataclass(frozen=True)
class Stack:
    """The modules of one Llama/Qwen2 causal LM that a pass runs, read once."""

    embed: torch.nn.Embedding
    rotary: torch.nn.Module
    layers: tuple[torch.nn.Module, ...]
    norm: torch.nn.Module
    head: torch.nn.Module   # an nn.Linear, or a quantized self-draft's packed linear (drafting/quantized.py)
    eager_attention: bool  # the eager attention wants an additive float mask; sdpa takes a boolean one
    dtype: torch.dtype

    @classmethod
    def of(cls, model: PreTrainedModel) -> "Stack":
        inner = model.model
        return cls(embed=inner.embed_tokens, rotary=inner.rotary_emb,
                   layers=tuple(inner.layers[: model.config.num_hidden_layers]), norm=inner.norm,
                   head=model.lm_head, eager_attention=model.config._attn_implementation == "eager",
                   dtype=inner.embed_tokens.weight.dtype)

    def attention_mask(self, visible: torch.Tensor) -> torch.Tensor:
        """A boolean (1, 1, q, keys) mask as the attention implementation wants it."""
        if not self.eager_attention:
            return visible
        zeros = torch.zeros(visible.shape, dtype=self.dtype, device=visible.device)
        return zeros.masked_fill(~visible, torch.finfo(self.dtype).min)


def prefix_pass(stack: Stack, ids: torch.Tensor, cache: LayerCache, start: int, keep: int,
                positions: torch.Tensor) -> torch.Tensor:
    """Logits (keep, vocab) of ids (1, q) at positions start…start+q−1, attending over the cached prefix.

    `positions` holds 0, 1, 2, … at least up to start+q (the static runner's
    preallocated `key_pos`, or a fresh arange); `cache` is handed to each layer
    as its past key values and returns the filled prefix [0, start+q).
    """
    q = int(ids.shape[1])
    end = start + q
    pos = positions[start:end].unsqueeze(0)
    mask = None
    if q > 1:  # one query attends to the whole prefix: no mask needed
        mask = stack.attention_mask((positions[:end].view(1, -1) <= positions[start:end].view(-1, 1)).view(1, 1, q, end))
    h = stack.embed(ids)
    pe = stack.rotary(h, pos)
    kv = cache_kw(stack.layers[0], cache)  # every layer is of one class: one lookup per pass
    for layer in stack.layers:
        h = layer(h, attention_mask=mask, position_embeddings=pe, position_ids=pos, **kv, use_cache=True)
    return stack.head(stack.norm(h[:, -keep:]))[0]


__all__ = ["Stack", "prefix_pass"]
