"""A gammatune `ModelPair` around models a user already holds, built once per (target, draft) and kept.

`load_pair` finds, loads and warms models from paths; a user of `generate`
has them in memory already. This module wraps those objects, unchanged, in
the engine's `ModelPair`, so the decoder, its runners (eager, static or
graphs, chosen by the same self-checks) and its draft sources run exactly as
under `gammatune run`. A pair is cached on the target, per draft (it goes
when the models go), so the runners' self-checks, buffers and CUDA
graphs are paid for on the first call only.

The draft is one of: a model sharing the target's vocabulary, a source
without a draft model by name ("prompt-lookup", "mtp": the head in the
target's own checkpoint, "eagle3:PATH" or a head's folder), or a self-draft
"self:int4" / "self:int8" / "self:bf16" built from the target's own weights
by the engine's self-draft builder.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

import torch

from ..errors import InvalidParameter, ModelLoadError
from ..engine.drafting.draft_sources import DrafterSettings, check_source_files, folder_config, prepare_source
from ..engine.common.pair import ModelPair, SelfDraft
from ..engine.common.names import BY_SOURCE, MODEL_FREE, head_source

if TYPE_CHECKING:   # the user's models and tokenizer come in loaded; transformers is not imported here for them
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# the draft_model names that load no draft model (a head read from its own folder: NAME:PATH)
_FREE = ", ".join(repr(n + (":PATH" if BY_SOURCE[n].head_param else "")) for n in MODEL_FREE)

SELF_PREFIX = "self:"

# The pairs are cached on the target itself, not in a WeakKeyDictionary keyed by it: a pair (and its runners)
# holds the target, so a weak-keyed entry would keep the model alive for ever (Python has no ephemerons),
# while an attribute makes target ↔ pair a cycle the collector frees with the model.
_PAIRS_ATTR = "_gammatune_pairs"


class _PairCache(dict):
    """The target's pairs by draft; a copy or a pickle of the model carries an empty one.

    (A pair holds locks and runners: `copy.deepcopy(model)`, which a self-draft
    builder or a user may call, or `torch.save(model)` must not try to copy them.)"""

    def __deepcopy__(self, memo: dict) -> "_PairCache":
        return _PairCache()

    def __reduce__(self) -> tuple:
        return (_PairCache, ())

_TOKENIZERS: "weakref.WeakKeyDictionary[PreTrainedModel, PreTrainedTokenizerBase]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def model_tokenizer(model: PreTrainedModel, given: PreTrainedTokenizerBase | None = None) -> PreTrainedTokenizerBase:
    """The tokenizer the events' text and stop strings use: the one given, else the model's own folder's."""
    if given is not None:
        return given
    with _LOCK:
        tok = _TOKENIZERS.get(model)
    if tok is not None:
        return tok
    where = getattr(model, "name_or_path", "") or getattr(getattr(model, "config", None), "_name_or_path", "")
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(where)
    except Exception as exc:   # any loader error: say what to pass instead
        raise ModelLoadError(f"no tokenizer found for the target ({where or 'no name_or_path'}: "
                             f"{type(exc).__name__}); pass text_tokenizer=<its tokenizer>") from None
    with _LOCK:
        _TOKENIZERS[model] = tok
    return tok


def self_draft(target: PreTrainedModel, spec: str) -> tuple[PreTrainedModel, SelfDraft]:
    """The target's own weights at lower precision as a draft model, and the pair's record of it (the engine's builder)."""
    from ..engine.drafting.self_draft import build_self_draft

    return build_self_draft(target, spec)


def _source(name: str) -> DrafterSettings:
    """The source a `draft_model` string names: a source without a draft model (`"mtp"`, `"eagle3:PATH"` or a
    head's folder), or a self-draft (which drafts as a model); anything else is one line."""
    head = head_source(name, folder_config(name))
    if head is not None:
        if not head[1].strip():
            raise InvalidParameter(f"draft_model={name!r} needs its head's folder: draft_model='{head[0]}:PATH'")
        return DrafterSettings(head[0], **{BY_SOURCE[head[0]].head_param: head[1]})
    if name in MODEL_FREE and not BY_SOURCE[name].head_param:
        return DrafterSettings(name)
    if name.startswith(SELF_PREFIX):
        return DrafterSettings()
    raise InvalidParameter(f"draft_model={name!r}: expected a model, {_FREE} or 'self:int4' / 'self:int8' / "
                           "'self:bf16'")


def _check_draft(target: PreTrainedModel, draft: object) -> None:
    if not isinstance(draft, torch.nn.Module) or not hasattr(draft, "config"):
        raise InvalidParameter(f"draft_model must be a causal LM, {_FREE} or 'self:int4'/'self:int8'/"
                               f"'self:bf16', got {type(draft).__name__}")
    if draft is target:
        raise InvalidParameter(f"draft_model is the target itself: pass a smaller model, {_FREE} or a self-draft")
    t_dev, d_dev = next(target.parameters()).device, next(draft.parameters()).device
    if t_dev != d_dev:
        raise InvalidParameter(f"draft_model is on {d_dev} but the target is on {t_dev}: move it with .to({str(t_dev)!r})")
    tv, dv = int(getattr(target.config, "vocab_size")), int(getattr(draft.config, "vocab_size"))   # torch types config as Tensor | Module
    if abs(tv - dv) > 128:   # padding differs by a few rows; anything more is another tokenizer
        raise InvalidParameter(f"draft_model's vocabulary ({dv}) is not the target's ({tv}): a draft must share "
                               "the target's tokenizer")


def pair_for(target: PreTrainedModel, draft_model: PreTrainedModel | str | None,
             tokenizer: PreTrainedTokenizerBase | None, engine: str = "auto") -> ModelPair:
    """The cached pair for `target` and `draft_model` (a model, "prompt-lookup" or "self:…")."""
    if draft_model is None:
        raise InvalidParameter(f"gammatune needs a draft: pass draft_model=<a model>, {_FREE} or a "
                               "self-draft such as 'self:int4'")
    settings = DrafterSettings()
    if isinstance(draft_model, str):
        settings = _source(draft_model)
        key: tuple[str | int, str] = (draft_model, engine)
    else:
        _check_draft(target, draft_model)
        key = (id(draft_model), engine)
    with _LOCK:
        cached = getattr(target, _PAIRS_ATTR, {}).get(key)
    if cached is not None and (isinstance(draft_model, str) or cached.draft is draft_model):
        if tokenizer is not None:
            cached.tokenizer = tokenizer
        return cached
    tok = model_tokenizer(target, tokenizer)
    lookup = not settings.loads_draft
    own = None
    if lookup:
        draft = None
    elif isinstance(draft_model, str):
        draft, own = self_draft(target, draft_model)
    else:
        draft = draft_model
    param = next(target.parameters())
    name = str(getattr(target, "name_or_path", "") or "target")
    pair = ModelPair(
        target=target, draft=draft, tokenizer=tok, device=param.device, dtype=param.dtype, name_target=name,
        name_draft=draft_model if isinstance(draft_model, str) else str(getattr(draft, "name_or_path", "") or "draft"),
        engine=engine, drafter=settings, self_draft=own,
    )
    if lookup:   # a head checked against the target and read now (one line if it does not fit), named as it drafts
        check_source_files(settings, target.config)
        pair.name_draft = prepare_source(settings, target) or pair.name_draft
    with _LOCK:
        pairs = getattr(target, _PAIRS_ATTR, None)
        if pairs is None:
            pairs = _PairCache()
            object.__setattr__(target, _PAIRS_ATTR, pairs)   # a plain attribute, not a submodule
        pairs[key] = pair
    return pair


__all__ = ["pair_for", "model_tokenizer", "self_draft", "SELF_PREFIX"]
