"""A hybrid cache's state at one length, to restore on a rewind (recurrent.py's `HybridRunner`).

Recurrent and convolution states are written in place at every token, so a
snapshot clones them (a fixed size per layer); attention keys and values are
replaced at each update rather than written into, so a reference to them is
already a copy of the cropped cache. States a family keeps on its modules
(recurrent_gemma) are the runner's own and are cloned alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from transformers import Cache


ModuleStates = dict[int, torch.Tensor | None]
"""A hybrid runner's states kept on modules (recurrent_gemma's), by slot: a tensor, or None before the first pass."""


class Snapshot:
    """The cache's state at one length: per layer, its attributes, with state tensors cloned; module states too."""

    __slots__ = ("length", "layers", "modules")

    def __init__(self, cache: Cache, length: int, modules: ModuleStates | None = None):
        self.length = length
        self.layers = [self._take(layer) for layer in cache.layers]
        self.modules = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in (modules or {}).items()}

    @staticmethod
    def _take(layer: object) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in vars(layer).items():
            if isinstance(value, dict):   # conv/recurrent states (written in place) and their flags
                out[key] = {i: v.clone() if isinstance(v, torch.Tensor) else v for i, v in value.items()}
            else:   # keys/values are replaced at each update, never written into: a reference is a copy
                out[key] = value
        return out

    def restore(self, cache: Cache, modules: ModuleStates | None = None) -> None:
        if modules is not None:
            for k, v in self.modules.items():
                modules[k] = v.clone() if isinstance(v, torch.Tensor) else v
        del cache.layers[len(self.layers):]
        for layer, saved in zip(cache.layers, self.layers):
            live = vars(layer)
            for key, value in saved.items():
                if isinstance(value, dict):
                    cur = live.get(key)
                    new = {}
                    for i, v in value.items():
                        old = cur.get(i) if isinstance(cur, dict) else None
                        if isinstance(v, torch.Tensor):
                            # into the live tensor where it fits (its address stays), else a copy: the snapshot stays valid
                            if isinstance(old, torch.Tensor) and old.shape == v.shape and old is not v:
                                old.copy_(v)
                                new[i] = old
                            else:
                                new[i] = v.clone()
                        else:
                            new[i] = v
                    live[key] = new
                else:
                    live[key] = value
            for key in [k for k in live if k not in saved]:
                del live[key]


__all__ = ["Snapshot"]
