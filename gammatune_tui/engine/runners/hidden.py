"""What a draft source may read of the target: its hidden rows, at the depths it names, from every pass.

The heads of 2026 draft from the target's own residual stream, not from its
text: an MTP head from the last layer's output (before or after the final
norm, per family), EAGLE-3 from three layers (low, middle, high), DFlash
from the layers its config lists (`target_layer_ids`). A source says which in
`TargetReads`; the session's target runner then keeps, for every position of
each forward pass (the prefill's and each verify's), those rows, in
`runner.hidden` — and only then: a runner that was not asked keeps nothing and
pays nothing (no hook is registered).

Depths count decoder layers: depth 0 is the embeddings' output, depth d the
output of decoder layer d − 1 (the input of layer d), depth N (the layer
count) the last layer's output before the final norm. That is the index of
transformers' `output_hidden_states` tuple for d < N (its last entry is after
the norm) and the layer index vLLM's EAGLE-3 `aux_hidden_state_layers` tap
(the input of that layer). `normed` adds the last layer's output after the
final norm, the row the LM head reads.

A source may also read the attention keys and values of layers it names
(`kv`): the Gemma 4 assistant cross-attends to the target's last full and
last sliding layer instead of keeping a cache of its own. Those are not
taken by hooks: the target's cache holds them, and after each step's rewind
it holds exactly the accepted positions, so the decoder hands the source the
runner's own `kv(layer)` views with the rows (no copy).

The rows are taken by forward hooks on the model's own modules (the decoder
layers, the embeddings), so every runner that runs those modules — the eager
runner's direct pass and the model's own forward, the hybrid runner's passes
(prefill, window, re-fed tokens), the static runner's prefix pass — gives the
same rows without a second copy of the stack. The normed row is the model's
final norm applied to the depth-N rows (the passes norm only the rows they
keep). Hooks fire only for the thread that registered them, so a second
session of the same model in another thread is never read by this one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import torch

from ...errors import InvalidParameter


@dataclass(frozen=True)
class TargetReads:
    """Which hidden rows of the target a draft source reads (see the module docstring for depths).

    `TargetReads(normed=True)`: the row the LM head reads (an MTP head fed post-norm);
    `TargetReads(last=True)`: the last layer's output before the final norm (pre-norm);
    `TargetReads(layers=(2, 16, 29))`: the inputs of layers 2, 16 and 29 (EAGLE-3's low, middle, high).
    `TargetReads.last_layer(model)` names depth N for a model whose layer count the source knows.
    """

    layers: tuple[int, ...] = ()   # depths 0 … N, in the order the rows come back
    last: bool = False              # depth N (the last layer's output, before the final norm), after `layers`
    normed: bool = False            # the last layer's output after the final norm, after everything else
    kv: tuple[int, ...] = ()        # layers whose attention keys and values (as their attention reads them) come too

    @property
    def count(self) -> int:
        """How many rows each position gets: `layers`, then last, then normed."""
        return len(self.layers) + int(self.last) + int(self.normed)


@dataclass(frozen=True)
class TargetRows:
    """The target's rows for consecutive positions `start` … `start + n − 1`, as a source receives them.

    `hidden` is (n, reads.count, hidden_size), in the order `TargetReads`
    lists them. Row j is the state at position start + j: the one whose
    logits chose the token at position start + j + 1 (so the last row of a
    step's rows is the one that chose the bonus token, the last id the
    decoder hands `draft` next).
    """

    start: int
    hidden: torch.Tensor
    # (keys, values) of each layer `TargetReads.kv` names, ((1, kv_heads, end, head_dim) each): every position
    # the target's cache holds after the step (0 … end − 1), not only these rows'; read them before the next step
    kv: tuple[tuple[torch.Tensor, torch.Tensor], ...] = ()

    @property
    def end(self) -> int:
        """The position after the last row (the target's cache length once these rows are handed over)."""
        return self.start + int(self.hidden.shape[0])

    def __len__(self) -> int:
        return int(self.hidden.shape[0])


def _stack_of(model: Any) -> tuple[Any, list[Any], Any]:
    """(embeddings, decoder layers, final norm) of a causal LM, or one line naming what is missing."""
    inner = model.get_decoder() if hasattr(model, "get_decoder") else getattr(model, "model", None)
    layers = getattr(inner, "layers", None)
    embed = getattr(inner, "embed_tokens", None)
    norm = getattr(inner, "norm", None)
    if layers is None or embed is None or norm is None:
        raise InvalidParameter(f"{type(model).__name__}: a draft source that reads the target's hidden states needs "
                               "its decoder's embed_tokens, layers and norm, which this model does not have")
    n = int(getattr(model.config, "num_hidden_layers", len(layers)))
    return embed, list(layers)[:n], norm


class Tapper:
    """A runner's reader of one model's hidden rows: `with tapper.pass_of(q):` around a forward keeps the
    rows of its last q positions in `tapper.rows` ((q, count, hidden))."""

    def __init__(self, model: Any, reads: TargetReads):
        embed, layers, norm = _stack_of(model)
        n = len(layers)
        bad = [d for d in reads.layers if not (0 <= d <= n)]
        if bad:
            raise InvalidParameter(f"a draft source asks for the target's hidden state at depth {bad[0]}, but the "
                                   f"target has {n} layers (depths 0 … {n})")
        self.reads = reads
        self.norm = norm
        self.depths = tuple(reads.layers) + ((n,) if reads.last or reads.normed else ())
        self._modules = {d: (embed if d == 0 else layers[d - 1]) for d in set(self.depths)}
        self._seen: dict[int, list[torch.Tensor]] = {}
        self._owner = 0
        self.rows: torch.Tensor | None = None

    def _hook(self, depth: int) -> Any:
        def keep(module: Any, args: Any, out: Any) -> None:
            if threading.get_ident() == self._owner:
                h = out[0] if isinstance(out, (tuple, list)) else out
                self._seen[depth].append(h[0])   # (1, q, hidden): batch 1
        return keep

    def pass_of(self, q: int) -> "_Pass":
        return _Pass(self, q)

    def _finish(self, q: int) -> None:
        parts = [torch.cat(self._seen[d], 0)[-q:] for d in self.depths]   # a pass may run in pieces (per token)
        if self.reads.normed:
            parts.append(self.norm(parts[-1]))
            if not self.reads.last:
                parts.pop(-2)
        self.rows = torch.stack(parts, 1) if parts else None


class _Pass:
    """One forward under the hooks: registered on entry, removed on exit, the rows taken."""

    def __init__(self, tapper: Tapper, q: int):
        self.tapper, self.q = tapper, q
        self.handles: list[Any] = []

    def __enter__(self) -> None:
        t = self.tapper
        t._owner = threading.get_ident()
        t._seen = {d: [] for d in t._modules}
        self.handles = [m.register_forward_hook(t._hook(d)) for d, m in t._modules.items()]

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        for h in self.handles:
            h.remove()
        if kind is None:
            with torch.no_grad():
                self.tapper._finish(self.q)


__all__ = ["TargetReads", "TargetRows", "Tapper"]
