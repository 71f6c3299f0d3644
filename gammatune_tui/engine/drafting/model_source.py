"""The default draft source: the draft model (or a self-draft's quantized copy) through its runner.

A row like the others (engine/common/names.py `SOURCES`, drafting/registry.py):
it is the one source whose `create` needs the draft runner, which the decoder
prefills and rewinds with the target's (kv_cache.py); one forward per drafted
token (drafting/__init__.py `draft_window`).
"""

from __future__ import annotations

from typing import Any

import torch

from ...errors import InvalidParameter
from . import Draft, DraftSource, SourceContext, draft_window
from ..common.names import MODEL_FREE
from ..common.sampling import Served
from ..policies import Policy
from ..runners import Runner


class ModelDraftSource(DraftSource):
    """The draft model through its runner: one forward per drafted token (drafting/__init__.py)."""

    def __init__(self, runner: Runner, vocab_cut: int | None):
        self.runner = runner
        self.vocab_cut = vocab_cut

    @classmethod
    def create(cls, params: dict[str, Any], made: SourceContext) -> "ModelDraftSource":
        runner = made.runner
        if runner is None:
            raise InvalidParameter("this pair has no draft model (it was loaded for a drafter that needs none); "
                                   f"use drafter {' or '.join(repr(n) for n in MODEL_FREE)} or load a draft model")
        return cls(runner, made.vocab_cut)

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        runner = self.runner
        assert runner is not None
        return draft_window(runner, ids[runner.length:], window, policy=policy, served=served, gen=gen,
                            vocab_cut=self.vocab_cut, eos=eos, device=device)


__all__ = ["ModelDraftSource"]
