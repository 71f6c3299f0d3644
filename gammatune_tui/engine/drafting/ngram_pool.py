"""The n-gram pool: prompt lookup's copy rule over the whole conversation, earlier turns' answers included.

Prompt lookup (prompt_lookup.py) indexes one session's text: its prompt and
what it has accepted so far. The pool keeps its index for as long as the
decoder lives, so a chat's later turns, or a program's later `generate()`
calls on the same decoder, draft from every earlier prompt and answer too:
the n-gram speculation of vLLM and SGLang over a shared pool, and the idea of
SuffixDecoding (Oliaro et al. 2024, arXiv 2411.04975) of drafting from
earlier requests' outputs. It pays where a later request repeats what an
earlier answer said but its own prompt does not hold it: a turn whose
history the context window no longer fits, separate prompts sent to one
decoder, an agent asked the same kind of thing again.

The rule is prompt lookup's, on the pool's text (earlier sessions' prompts
and answers, then this session's): the longest n-gram (n from `ngram_max`
down to `ngram_min`) that ends the accepted text and occurred before, its
most recent occurrence, and the tokens that followed it, with the same
Witten–Bell stand-in probabilities. A deterministic function of the text, so
q is a point mass and greedy output is the target's own (verification.py).
In a session with no earlier ones it proposes exactly what prompt lookup
does. Earlier sessions' text joins the pool when the next session starts: the
decoder's accepted list grows in place, so the reference kept here holds the
whole answer by then.
"""

from __future__ import annotations

from typing import Any

from . import DraftSource, SourceContext
from .prompt_lookup import NgramIndex, PointMassSource


class NgramPoolSource(PointMassSource):
    """The `ngram-pool` draft source: one `NgramIndex` over every session of its decoder, in order.

    It drafts as prompt lookup does (`PointMassSource.draft`); only what the index holds and when it grows
    differ.
    """

    def __init__(self, ngram_min: int, ngram_max: int, history: list[int] | None = None,
                 index: NgramIndex | None = None):
        self.ngram_min, self.ngram_max = ngram_min, ngram_max
        self.seq: list[int] = list(history or [])   # earlier sessions' text, then this session's as it grows
        self.base = len(self.seq)                    # where this session's text starts in `seq`
        self.index = index if index is not None else NgramIndex(ngram_min, ngram_max)
        self.text: list[int] = []                    # this session's accepted text (the decoder's own list)

    @classmethod
    def create(cls, params: dict[str, Any], made: SourceContext) -> "NgramPoolSource":
        """A fresh pool, or the previous session's pool with that session's whole text added."""
        previous = made.previous
        if not isinstance(previous, cls):
            return cls(**params)
        history = previous.seq[:previous.base] + list(previous.text)
        same = (previous.ngram_min, previous.ngram_max) == (params["ngram_min"], params["ngram_max"])
        # the old index covers a prefix of `history` (it grows by appending), so it carries on from there
        return cls(**params, history=history, index=previous.index if same else None)

    def start(self, prompt_ids: list[int]) -> None:
        self.text = prompt_ids
        del self.seq[self.base:]
        self.seq.extend(prompt_ids)
        self.index.extend(self.seq)

    def propose(self, ids: list[int], window: int) -> tuple[list[int], list[float], list[float]]:
        """The raw proposal after this session's accepted text `ids` (no policy, no EOS cut)."""
        seq = self.seq
        seq.extend(ids[len(seq) - self.base:])
        self.index.extend(seq)
        return self.index.propose(seq, window)


__all__ = ["NgramPoolSource"]
