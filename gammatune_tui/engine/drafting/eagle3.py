"""`--draft eagle3:PATH`: an EAGLE-3 head from its own checkpoint folder drafts, reading three target layers.

The head (eagle3_head.py) reads, for every position t the sequence kept, the
target's rows at three depths (low, middle, high) concatenated and fused by
`fc`, paired with the token at t + 1 (the one the target chose there), at
rotary position t; its own KV cache holds one entry per such position and
rewinds with the target's (`observe`: whatever it holds at or past
`rows.start` belonged to a rejected window). A draft runs the layer over the
rows it has not seen, then chains: each next position reads the layer's own
output (not fc'ed) and the token just drafted. The chained entries are cropped
as soon as the window is drafted; after the verify the target's rows of the
accepted positions replace them, so the cache is always what a fresh run over
the accepted text would build.

The head scores its reduced vocabulary (`draft_vocab_size`); its logits are
placed at the target ids `d2t` maps them to, every other id at −∞, so the
proposal law q lives in the target's vocabulary before verification: greedy
drafts the argmax's target id, sampled drafts are drawn from q served through
the session's temperature, top-k and top-p, and the accept test corrects q to
the target's law whatever the head proposes (exact at every temperature).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Callable

import torch

from . import Draft, DraftSource, SourceContext, chain_draft
from .eagle3_head import Eagle3Head, HeadCache, HeadSpec, check_head, read_spec
from ..common.sampling import Served
from ..policies.policy_base import Policy
from ..runners.hidden import TargetReads, TargetRows
from .head_files import check_folder, head_folder

if TYPE_CHECKING:
    from transformers import PreTrainedModel
    from . import TargetConfig


def describe(spec: HeadSpec, depths: tuple[int, ...]) -> str:
    """'eagle3, layers 2/4/5, 32k draft vocabulary': the subtitle's words for the head."""
    v = spec.draft_vocab
    vocab = f"{v // 1000}k" if v >= 10_000 else str(v)
    return f"eagle3, layers {'/'.join(str(d) for d in depths)}, {vocab} draft vocabulary"


_HEADS: "weakref.WeakKeyDictionary[PreTrainedModel, dict[str, tuple[Eagle3Head, HeadSpec]]]" = weakref.WeakKeyDictionary()


def _folder(params: dict[str, Any]) -> str:
    return head_folder(params, "eagle3_head", "eagle3", "its head's folder")


def head_of(target: PreTrainedModel, folder: str) -> tuple[Eagle3Head, HeadSpec]:
    """The head in `folder` built over `target`, read once per loaded target (load_pair reads it, so a bad
    tensor is refused before anything runs; every session, compare's runs included, reuses it)."""
    heads = _HEADS.setdefault(target, {})
    if folder not in heads:
        spec = check_head(folder, target.config)
        heads[folder] = (Eagle3Head(target, spec), spec)
    return heads[folder]


class Eagle3Source(DraftSource):
    """One session's EAGLE-3 drafting over the target's rows (see the module docstring)."""

    runner = None

    def __init__(self, target: PreTrainedModel, head: Eagle3Head, spec: HeadSpec, depths: tuple[int, ...]):
        self.target, self.head, self.spec, self.depths = target, head, spec, depths
        self.reads = TargetReads(layers=depths)
        self.cache = HeadCache()
        self.done = 0                                # positions the head's cache holds
        self.waiting: list[torch.Tensor] = []        # fused-input rows of positions done … not run yet
        self.last_out: torch.Tensor | None = None    # the layer's output at position done − 1
        width = target.get_output_embeddings().weight.shape[0]
        self.width = int(width)                      # the verify's logits width (the target's vocabulary rows)
        self.label = describe(spec, depths)

    @classmethod
    def create(cls, params: dict[str, Any], made: SourceContext) -> "Eagle3Source":
        target = made.pair.target
        head, spec = head_of(target, _folder(params))
        n = int(getattr(target.config.get_text_config(), "num_hidden_layers"))
        return cls(target, head, spec, spec.depths(n))

    @classmethod
    def prepare(cls, params: dict[str, Any], target: PreTrainedModel) -> str:
        head, spec = head_of(target, _folder(params))
        return describe(spec, spec.depths(int(target.config.get_text_config().num_hidden_layers)))

    @classmethod
    def check_files(cls, params: dict[str, Any], target_config: TargetConfig | None) -> None:
        """The head's config and tensor header against the target's config: one line before weights load."""
        check_folder(_folder(params), target_config, read_spec, check_head)

    def _crop(self, n: int) -> None:
        self.cache.crop(n)
        self.done = n
        self.last_out = None

    def observe(self, rows: TargetRows) -> None:
        if rows.start == 0:
            self._crop(0)
            self.waiting = []
        elif rows.start < self.done:
            self._crop(rows.start)
            self.waiting = []
        else:
            del self.waiting[rows.start - self.done:]
        self.waiting.extend(rows.hidden.flatten(1).unbind(0))   # (3 × hidden) per position: low, mid, high

    def _catch_up(self, ids: list[int]) -> torch.Tensor | None:
        """Run the layer over the waiting rows (each paired with the token after it): its last output."""
        if self.waiting:
            start = self.done
            toks = torch.tensor(ids[start + 1:start + 1 + len(self.waiting)], device=self.waiting[0].device)
            out = self.head.step(torch.stack(self.waiting), toks, self.cache, start)
            self.done += len(self.waiting)
            self.waiting = []
            self.last_out = out[-1]
        return self.last_out

    def _law(self, h: torch.Tensor, served: Served) -> torch.Tensor:
        """q over the target's vocabulary: the head's logits at their d2t ids, −∞ elsewhere, then served."""
        full = torch.full((self.width,), float("-inf"), device=h.device)
        full[self.head.to_target] = self.head.logits(h)
        return torch.softmax(full, dim=-1) if served.greedy else served.probs(full.unsqueeze(0))[0]

    def step_parts(self, ids: list[int], served: Served) -> dict[str, Callable[[], object]]:
        """A chained step's two parts: the head's layer (one position, its cache cropped back after) and its law
        over its reduced vocabulary (the projection, mapped into the target's ids by d2t, and the softmax)."""
        with torch.inference_mode():
            h = self._catch_up(ids)
        if h is None:
            return {}
        kept, row = self.done, h

        def layer() -> object:
            with torch.inference_mode():
                try:
                    return self.head.step(row.unsqueeze(0), torch.tensor([ids[-1]], device=row.device), self.cache,
                                          kept)
                finally:
                    self.cache.crop(kept)

        def law() -> object:
            with torch.inference_mode():
                return self._law(row, served)

        return {"the head's layer": layer, f"its projection over {len(self.head.to_target):,} tokens": law}

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        out = Draft()
        if window <= 0:
            return out
        with torch.inference_mode():
            h = self._catch_up(ids)
            if h is None:   # a one-token prompt: no row to draft from yet
                return out
            kept, pos = self.done, self.done

            def advance(row: torch.Tensor, x: int) -> torch.Tensor:
                nonlocal pos
                row = self.head.step(row.unsqueeze(0), torch.tensor([x], device=row.device), self.cache, pos)[-1]
                pos += 1
                return row

            try:
                return chain_draft(h, window, lambda row: self._law(row, served), advance, served=served, gen=gen,
                                   policy=policy, eos=eos)
            finally:
                self.cache.crop(kept)   # the chained entries are speculative: the target's rows replace them


__all__ = ["Eagle3Source", "describe", "head_of"]
