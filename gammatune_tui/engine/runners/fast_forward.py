"""One forward pass per call, as cheap as the model allows.

For small models on a CPU, a forward pass through transformers' wrappers
costs as much as the layers themselves. For the plain Llama/Qwen2 stack the
eager runner runs the same modules directly (runners/prefix_pass.py, the
pass the static runner uses too). It is used only after a self-check against
the model's own forward on this very model; anything unusual (other
architectures, sliding windows, accelerate dispatch, a failed check) takes
the standard path.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import torch
from transformers import DynamicCache
from .hf_compat import cache_kw
from .prefix_pass import Stack, prefix_pass
from ..common.logits_check import compute_dtype, logits_close
from .base import Forward, GradMode, grad_mode

if TYPE_CHECKING:
    from transformers import PreTrainedModel

_FAST_ARCHS = ("LlamaForCausalLM", "Qwen2ForCausalLM")
_FORWARDS: "weakref.WeakKeyDictionary[PreTrainedModel, Forward]" = weakref.WeakKeyDictionary()


def _standard_forward(model: PreTrainedModel) -> Forward:
    def fwd(ids: torch.Tensor, cache: DynamicCache, keep: int) -> torch.Tensor:
        return model(input_ids=ids, **cache_kw(model, cache), use_cache=True, logits_to_keep=keep).logits[0]

    return fwd


def _direct_forward(model: PreTrainedModel) -> Forward:
    """The stack run module by module over the eager runner's DynamicCache (runners/prefix_pass.py)."""
    stack = Stack.of(model)
    device = next(model.parameters()).device

    def fwd(ids: torch.Tensor, cache: DynamicCache, keep: int) -> torch.Tensor:
        past = cache.get_seq_length()
        return prefix_pass(stack, ids, cache, past, keep, torch.arange(past + ids.shape[1], device=device))

    return fwd


def _direct_eligible(model: PreTrainedModel) -> bool:
    cfg = getattr(model, "config", None)
    inner = getattr(model, "model", None)
    if cfg is None or inner is None or type(model).__name__ not in _FAST_ARCHS:
        return False
    if getattr(model, "hf_device_map", None) or getattr(cfg, "_attn_implementation", None) not in ("sdpa", "eager"):
        return False
    if any(t != "full_attention" for t in (getattr(cfg, "layer_types", None) or [])):
        return False
    if getattr(cfg, "use_sliding_window", False):
        return False
    return all(hasattr(inner, a) for a in ("embed_tokens", "layers", "norm", "rotary_emb")) and hasattr(model, "lm_head")


def make_forward(model: PreTrainedModel) -> Forward:
    """fwd(ids (1, n), cache, keep) -> logits (keep, vocab): the direct path when it checks out."""
    cached = _FORWARDS.get(model)
    if cached is not None:
        return cached
    std = _standard_forward(model)
    chosen = std
    if _direct_eligible(model):
        try:
            fast = _direct_forward(model)
            device = next(model.parameters()).device
            vocab = int(model.config.vocab_size)
            g = torch.Generator().manual_seed(0)
            ids = torch.randint(0, vocab, (1, 7), generator=g).to(device)
            with torch.no_grad():
                c1, c2 = DynamicCache(), DynamicCache()
                full = std(ids, c1, 7)  # one pass of the model; the direct path in chunks of 4, 2 and 1
                a = [full[:4], full[4:6], full[6:]]
                b = [fast(ids[:, :4], c2, 4), fast(ids[:, 4:6], c2, 2), fast(ids[:, 6:], c2, 1)]
            ok = all(logits_close(x, y, compute_dtype(model)) for x, y in zip(a, b))
            if ok:
                chosen = fast
        except Exception:  # any surprise: the standard path is always correct
            chosen = std
    chosen = _grad_free(chosen, grad_mode(model))
    try:
        _FORWARDS[model] = chosen
    except TypeError:  # pragma: no cover - not weak-referenceable
        pass
    return chosen


def _grad_free(fn: Forward, mode: GradMode) -> Forward:
    """Run each forward without autograd in `mode` (base.grad_mode: inference_mode where the weights allow it),
    entered per call, so no grad mode leaks across the generator's yields."""

    def run(ids: torch.Tensor, cache: DynamicCache, keep: int) -> torch.Tensor:
        with mode():
            return fn(ids, cache, keep)

    run.__qualname__ = f"{fn.__qualname__}[{mode.__name__}]"
    return run


__all__ = ["make_forward"]
