"""The `eager` runner: transformers' DynamicCache, grown by concatenation, rewound by cropping.

It runs every architecture transformers runs (through `fast_forward`'s direct
Llama/Qwen2 path when that checks out, else the model's own forward), so it is
the fallback whenever the static runners do not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from transformers import DynamicCache

from .fast_forward import make_forward
from .base import Runner, layer_kv

if TYPE_CHECKING:
    from transformers import PreTrainedModel


class EagerRunner(Runner):
    kind = "eager"

    def __init__(self, model: PreTrainedModel):
        super().__init__(model)
        self._fwd = make_forward(model)
        self.cache = DynamicCache()

    @property
    def length(self) -> int:
        return self.cache.get_seq_length()

    def start(self, capacity: int, gamma_max: int | None = None) -> None:
        self.cache = DynamicCache()

    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        if self.tapper is None:
            return self._fwd(ids, self.cache, keep)
        with self.tapper.pass_of(int(ids.shape[1])):
            return self._fwd(ids, self.cache, keep)

    def rewind(self, length: int) -> None:
        self._check_rewind(length)
        drop = self.length - length
        if drop > 0:
            self.cache.crop(-drop)

    def kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        return layer_kv(self.cache.layers[layer])


__all__ = ["EagerRunner"]
