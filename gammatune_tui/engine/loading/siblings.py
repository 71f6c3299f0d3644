"""Self-drafts resolved into pairs: the sibling pair whose draft is the target's quantized copy.

A self-draft (`self:int4`, `self:int8`, …) is a draft *model*, built from
the target's own weights; it reaches the user as a drafter name (the chat's
drafter switch, compare's `--drafters model,self:int4`, the API's
`SpeculativeDecoder(pair, drafter="self:int4")`). It is resolved here, before
any decoder is made: `with_draft` gives the pair's sibling that holds the
copy as its draft (built once per name, then kept on the pair), and the
decoder only ever drafts with "the pair's draft model". `load_pair` resolves
`--draft self:int4` the same way at load (models.py); this module is for a
pair already loaded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable

from ..common.pair import ModelPair
from ..decoder import SpeculativeDecoder as _StepDecoder
from ..drafting.draft_sources import MODEL, DrafterSettings, pair_drafter
from ..drafting.self_draft import build_self_draft, parse_self_draft
from .warmup import warm_up

if TYPE_CHECKING:
    from transformers import LogitsProcessor

    from ..common.sampling import SamplingConfig
    from ..policies import Policy, PolicySettings


def with_draft(pair: ModelPair, draft: str) -> ModelPair:
    """`pair` with a self-draft (`self:int4`, …) as its draft model: built once, then kept on `pair`.

    The sibling shares the target, tokenizer and settings; it has its own
    runners (warmed up when this pair was), and its `self_draft` record names
    the copy, its precision and its build time (the load stage "self-draft").
    """
    spec = parse_self_draft(draft)
    if pair.self_draft is not None and pair.self_draft.name == spec.name:
        return pair
    sib = pair.siblings.get(spec.name)
    if sib is None:
        model, own = build_self_draft(pair.target, spec)
        sib = replace(pair, draft=model, name_draft=spec.name, drafter=DrafterSettings(MODEL), self_draft=own,
                      load_s={**pair.load_s, "self-draft": own.build_s})
        if pair.warmup_s:
            sib.warmup_s = warm_up(sib)
        pair.siblings[spec.name] = sib
    return sib


def decoding_pair(pair: ModelPair, drafter: DrafterSettings | str | None) -> tuple[ModelPair, DrafterSettings]:
    """The pair a decoder drafting with `drafter` runs on, and the drafter it is given there.

    A self-draft becomes the sibling pair and the draft model ("model"); any
    other source runs on `pair` itself (None: the pair's own default).
    """
    d = pair_drafter(pair) if drafter is None else DrafterSettings.of(drafter)
    if d.self_draft:
        return with_draft(pair, d.name), DrafterSettings(MODEL)
    return pair, d


class SpeculativeDecoder(_StepDecoder):
    """The public API's decoder (`gammatune_tui.engine.SpeculativeDecoder`): the step core's, on the pair
    that drafts with `drafter` — a self-draft name is resolved into the pair's sibling first (`with_draft`),
    so `SpeculativeDecoder(pair, drafter="self:int4")` works on any loaded pair."""

    def __init__(self, pair: ModelPair, policy: PolicySettings | Policy | None = None,
                 sampling: SamplingConfig | None = None, label: str = "",
                 drafter: DrafterSettings | str | None = None, *,
                 logits_processor: Iterable[LogitsProcessor] | None = None):
        pair, settings = decoding_pair(pair, drafter)
        super().__init__(pair, policy, sampling, label, settings, logits_processor=logits_processor)


__all__ = ["with_draft", "decoding_pair", "SpeculativeDecoder"]
