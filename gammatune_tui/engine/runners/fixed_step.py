"""The graphs runner's step: fixed shapes, grouped-query attention over a length bucket, optionally compiled.

One call feeds a window of q tokens at positions `pos` (a device tensor) and
attends over the first `span` key positions of the static buffers (a length
bucket, plan.py): every shape is fixed by (q, span), nothing is read back to
the host, so a CUDA graph can capture it, and its cost follows the filled
length, not the buffers' capacity.

The layer loop is the Llama/Qwen2 decoder layer written out over the model's
own modules (norms, projections, rotary table, MLP, LM head), so attention
can be grouped-query without materialising the repeated K/V that
transformers' SDPA path makes (`repeat_kv`) whenever a mask is given. Two
attention paths, chosen by `GAMMATUNE_ATTENTION`:

* `sdpa` (default where torch has `enable_gqa`, torch ≥ 2.5):
  `scaled_dot_product_attention(..., enable_gqa=True)` with a boolean mask;
* `grouped`: plain PyTorch: the queries of each KV head's group are stacked
  and multiplied against that head's keys once (no repeat), softmax in fp32.

The runner's self-check compares this step, captured or not, against the
model's own forward before it is trusted (choice.py), so a model on which
this re-statement of the layer differs falls back.

`GAMMATUNE_COMPILE` (`auto`, `1`, `0`): with 1 — and under `auto` on CUDA —
the step is compiled with torch.compile (`fullgraph=True`, inductor without
its own CUDA graphs) and the graphs runner captures the compiled step.
`auto` keeps it off on the CPU (compiling costs more than it saves there).
Compiled artifacts are reused across runs through inductor's own caches (FX
graph and autotuning caches, on by default), kept in `$TORCHINDUCTOR_CACHE_DIR`
or, where that is unset, in gammatune's cache: `$GAMMATUNE_CACHE_DIR/inductor`,
else `$XDG_CACHE_HOME/gammatune/inductor`, else `~/.cache/gammatune/inductor`.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.nn.functional as F

from ...errors import InvalidParameter

ATTENTION_ENV = "GAMMATUNE_ATTENTION"
COMPILE_ENV = "GAMMATUNE_COMPILE"
COMPILE_MODE = "max-autotune-no-cudagraphs"  # inductor's fused kernels; the CUDA graphs are ours

try:  # torch >= 2.5
    from torch.nn.attention import SDPBackend  # noqa: F401

    _HAS_GQA = "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")
except ImportError:  # pragma: no cover - old torch
    _HAS_GQA = False


def attention_path() -> str:
    """`sdpa` or `grouped`, from GAMMATUNE_ATTENTION (default: sdpa where torch has enable_gqa)."""
    want = os.environ.get(ATTENTION_ENV, "").strip().lower() or ("sdpa" if _HAS_GQA else "grouped")
    if want not in ("sdpa", "grouped"):
        raise InvalidParameter(f"{ATTENTION_ENV} must be sdpa or grouped, got {want!r}")
    return "sdpa" if want == "sdpa" and _HAS_GQA else "grouped"


def compile_wanted(device: torch.device, captured: bool = True) -> bool:
    """Whether the step is compiled: GAMMATUNE_COMPILE=1/0, or `auto` (the default): a captured step on CUDA."""
    v = os.environ.get(COMPILE_ENV, "auto").strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    if v != "auto":
        raise InvalidParameter(f"{COMPILE_ENV} must be auto, 1 or 0, got {v!r}")
    return device.type == "cuda" and captured


def inductor_cache_dir() -> str:
    """Where inductor keeps compiled artifacts between runs (see the module docstring); set before compiling."""
    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "").strip()
    if own:
        return own
    root = os.environ.get("GAMMATUNE_CACHE_DIR", "").strip()
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "gammatune")
    path = os.path.join(os.path.expanduser(root), "inductor")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
    return path


def grouped_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor,
                      scale: float) -> torch.Tensor:
    """q (1, H, Q, D); k, v (1, KVH, S, D); visible (Q, S) bool -> (1, H, Q, D), K/V never repeated."""
    _, heads, nq, dim = q.shape
    kvh = k.shape[1]
    rep = heads // kvh
    qg = q.reshape(1, kvh, rep * nq, dim)  # a KV head's queries, stacked: (rep, Q) rows
    scores = torch.matmul(qg, k.transpose(-1, -2)).float() * scale  # (1, KVH, rep·Q, S)
    mask = visible.repeat(rep, 1)  # (rep·Q, S): the small mask is repeated, not the keys
    scores = scores.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(v.dtype)
    return torch.matmul(probs, v).reshape(1, heads, nq, dim)


class FixedStep:
    """step(ids (1, q), pos (q,), span) -> logits (q, vocab), writing K/V at `pos` into `cache`'s buffers."""

    def __init__(self, runner: Any):
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        self.runner = runner
        self.rope = apply_rotary_pos_emb
        self.attention = attention_path()
        self.compiled = False
        self._fn = self._body

    def enable_compile(self) -> None:
        """Compile the body once; every (q, span) shape afterwards shares the dynamic-shape code."""
        if self.compiled:
            return
        cfg = torch._dynamo.config
        for name in ("recompile_limit", "cache_size_limit"):  # one entry per (q, span) before dynamic shapes
            if hasattr(cfg, name):
                setattr(cfg, name, max(int(getattr(cfg, name)), 256))
        inductor_cache_dir()
        mode = COMPILE_MODE if self.runner.device.type == "cuda" else "default"
        self._fn = torch.compile(self._body, fullgraph=True, mode=mode)
        self.compiled = True

    def __call__(self, ids: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        return self._fn(ids, pos, self.runner.cache.key_pos[:span])

    def _body(self, ids: torch.Tensor, pos: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        r = self.runner
        cache = r.cache
        nq = ids.shape[1]
        span = keys.shape[0]
        visible = keys.view(1, -1) <= pos.view(-1, 1)  # (q, span): key j is seen by query i iff j <= pos[i]
        h = r.embed(ids)
        cos, sin = r.rotary(h, pos.view(1, nq))
        for i, layer in enumerate(r.layers):
            attn = layer.self_attn
            x = layer.input_layernorm(h)
            q = attn.q_proj(x).view(1, nq, -1, r.head_dim).transpose(1, 2)
            k = attn.k_proj(x).view(1, nq, -1, r.head_dim).transpose(1, 2)
            v = attn.v_proj(x).view(1, nq, -1, r.head_dim).transpose(1, 2)
            q, k = self.rope(q, k, cos, sin)
            kb, vb = cache._ks[i], cache._vs[i]
            kb.index_copy_(2, pos, k)
            vb.index_copy_(2, pos, v)
            ks, vs = kb[:, :, :span], vb[:, :, :span]
            if self.attention == "sdpa":
                o = F.scaled_dot_product_attention(q, ks, vs, attn_mask=visible.view(1, 1, nq, span),
                                                   scale=attn.scaling, enable_gqa=True)
            else:
                o = grouped_attention(q, ks, vs, visible, attn.scaling)
            h = h + attn.o_proj(o.transpose(1, 2).reshape(1, nq, -1))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        return r.head(r.norm(h))[0]


__all__ = ["FixedStep", "grouped_attention", "inductor_cache_dir", "attention_path", "compile_wanted", "ATTENTION_ENV", "COMPILE_ENV",
           "COMPILE_MODE"]
