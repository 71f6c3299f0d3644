"""The draft-source seam: who proposes the tokens a step verifies (a draft model, or prompt lookup).

The decoder's loop — draft, verify, accept, rewind, report — does not know
which source it drives. Each step it asks the session's source for up to
`window` tokens and gets a `Draft` back (drafting/__init__.py): the token ids, for
each one the two numbers the γ policy reads (top-1 and chosen probability),
whether the policy ended the window early, how many forward passes it took,
and what the exact accept test needs as the proposal law q: the served rows
of a draft model, or `point_mass` for a source that proposes
deterministically (q = δ_x, so the target accepts x with probability p(x)
and a rejection draws from norm(max(0, p − δ_x)); verification.py).

A source that keeps a KV cache exposes its `runner`, which the decoder
prefills and rewinds with the target's (kv_cache.py); a model-free source has
none. `DrafterSettings` is what a user picks (`--drafter`, `load_pair(drafter=)`,
`SpeculativeDecoder(drafter=)`); `make_source` builds the source for one session.
Adding a source: a `DraftSource` subclass here or beside it (prompt_lookup.py is
one), a name in `DRAFTERS`, a branch in `make_source`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..common.pair import ModelPair
from ...errors import InvalidParameter
from . import Draft, DraftSource, draft_window
# the names and n-gram defaults live in names.py, which the command line reads without torch
from ..common.names import DEFAULT_NGRAM_MAX, DEFAULT_NGRAM_MIN, DRAFTERS, MODEL, PROMPT_LOOKUP, SELF_DRAFTS, is_self_draft  # noqa: F401
from ..policies import Policy
from .prompt_lookup import PromptLookupSource
from ..runners import Runner
from ..common.sampling import Served

NGRAM_LIMIT = 32


def _whole(v: Any, flag: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InvalidParameter(f"{flag} must be a whole number >= 1, got {v!r}")
    if v > NGRAM_LIMIT:
        raise InvalidParameter(f"{flag} must be at most {NGRAM_LIMIT}, got {v}")
    return v


@dataclass(frozen=True)
class DrafterSettings:
    """Which source drafts (`model`, `prompt-lookup`, or a self-draft such as `self:int4`) and prompt lookup's n-grams.

    A self-draft drafts as a model does: it names a draft model (a quantized
    copy of the target), resolved into a pair whose draft it is before a
    decoder is made (loading/siblings.py `with_draft`).
    """

    name: str = MODEL
    ngram_min: int = DEFAULT_NGRAM_MIN
    ngram_max: int = DEFAULT_NGRAM_MAX

    def __post_init__(self) -> None:
        if is_self_draft(self.name):
            from .self_draft import parse_self_draft

            object.__setattr__(self, "name", parse_self_draft(self.name).name)   # canonical, or one clear line
        elif self.name not in DRAFTERS:
            raise InvalidParameter(f"unknown drafter {self.name!r}; expected one of "
                                   f"{', '.join(DRAFTERS + SELF_DRAFTS)}")
        lo, hi = _whole(self.ngram_min, "--ngram-min"), _whole(self.ngram_max, "--ngram-max")
        if lo > hi:
            raise InvalidParameter(f"--ngram-min ({lo}) must not exceed --ngram-max ({hi})")

    @property
    def model_free(self) -> bool:
        return self.name == PROMPT_LOOKUP

    @property
    def self_draft(self) -> bool:
        return is_self_draft(self.name)

    @property
    def short(self) -> str:
        """A label for compare's contestants: `model` or `lookup`."""
        return "lookup" if self.name == PROMPT_LOOKUP else self.name

    def params(self) -> dict[str, Any]:
        """What a header records beside the name (nothing for the model)."""
        return {"ngram_min": self.ngram_min, "ngram_max": self.ngram_max} if self.model_free else {}

    @classmethod
    def of(cls, value: "DrafterSettings | str | None", *, ngram_min: int | None = None,
           ngram_max: int | None = None) -> "DrafterSettings":
        """A settings object from a name (or settings), with n-gram sizes where given."""
        if isinstance(value, DrafterSettings):
            base = value
        elif value is None or isinstance(value, str):
            base = cls(value or MODEL)
        else:
            raise InvalidParameter(f"drafter must be a name or DrafterSettings, got {type(value).__name__}")
        lo = base.ngram_min if ngram_min is None else ngram_min
        hi = base.ngram_max if ngram_max is None else ngram_max
        return base if (lo, hi) == (base.ngram_min, base.ngram_max) else cls(base.name, lo, hi)


def parse_drafters(text: str) -> list[str]:
    """'model,self:int4,prompt-lookup' → the names; known names (self-drafts canonical), no duplicates."""
    names = [p.strip() for p in str(text).split(",") if p.strip()]
    known = ", ".join(DRAFTERS + SELF_DRAFTS)
    if not names:
        raise InvalidParameter(f"--drafters must name at least one of {known}")
    for i, n in enumerate(names):
        if is_self_draft(n):
            from .self_draft import parse_self_draft

            names[i] = parse_self_draft(n).name
        elif n not in DRAFTERS:
            raise InvalidParameter(f"unknown drafter {n!r} in --drafters; expected {known}")
    if len(set(names)) != len(names):
        raise InvalidParameter(f"--drafters names a drafter twice: {text!r}")
    return names


def pair_drafter(pair: ModelPair) -> DrafterSettings:
    """The drafter a pair's sessions use unless told otherwise: what it was loaded for, else the model."""
    if isinstance(pair.drafter, DrafterSettings):
        return pair.drafter
    if pair.draft is None:
        return DrafterSettings(PROMPT_LOOKUP)
    return DrafterSettings(MODEL)


class ModelDraftSource(DraftSource):
    """The draft model through its runner: one forward per drafted token (drafting/__init__.py)."""

    name = MODEL

    def __init__(self, runner: Runner, vocab_cut: int | None):
        self.runner = runner
        self.vocab_cut = vocab_cut

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        runner = self.runner
        assert runner is not None
        return draft_window(runner, ids[runner.length:], window, policy=policy, served=served, gen=gen,
                            vocab_cut=self.vocab_cut, eos=eos, device=device)


def make_source(settings: DrafterSettings, draft_runner: Runner | None, vocab_cut: int | None) -> DraftSource:
    """The source for one session: the draft model's (needs its runner) or prompt lookup's."""
    if not settings.model_free:   # the model (a self-draft's pair has it as its draft model)
        if draft_runner is None:
            raise InvalidParameter("this pair has no draft model (it was loaded for prompt lookup); "
                                   "use drafter 'prompt-lookup' or load a draft model")
        return ModelDraftSource(draft_runner, vocab_cut)
    return PromptLookupSource(settings.ngram_min, settings.ngram_max)


__all__ = [
    "MODEL", "PROMPT_LOOKUP", "DRAFTERS", "DEFAULT_NGRAM_MIN", "DEFAULT_NGRAM_MAX", "DrafterSettings",
    "parse_drafters", "pair_drafter", "DraftSource", "ModelDraftSource", "make_source",
]
