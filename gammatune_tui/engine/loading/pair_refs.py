"""Which files a pair names, and who drafts: the checks made before any weights are read.

`settle_pair` turns what the user gave (paths, hub ids, `--pair`, the demo
pair, `--draft self:int4`, `--drafter`) into the target and draft to load and
the draft source; `check_pair` runs it with the file checks alone, so a
command fails with one line before an app opens or a model loads. A preset
without a draft model drafts by its own default (prompt lookup or a
self-draft); asking it for a draft model by name (`--drafter model`) is one
line naming what would work, never a silent switch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import resources
from ...errors import InvalidParameter
from ..context import ContextWindow, window_of
from ..drafting.draft_sources import MODEL, DrafterSettings, check_source_files, head_drafter
from .model_files import ModelRef, locate_pair, read_config
from ..common.names import BY_SOURCE, MODEL_FREE, is_self_draft

HEAD = "mtp"   # `--draft mtp`: not a draft model's files but the target's own MTP head (drafting/mtp.py)
from .presets import DEMO, PRESETS, pair_names, preset_target


@dataclass(frozen=True)
class PairRefs:
    """What `check_pair` found: where each model is, and the pair's context from the configs (no weights read)."""

    target: ModelRef
    draft: ModelRef | None   # None: a model-free drafter (prompt lookup) drafts, no draft model
    window: ContextWindow | None = None   # None when a config is still to be downloaded


def check_pair(target: str | None = None, draft: str | None = None, *, pair: str | None = None, demo: bool = False,
               allow_pickle: bool = False, download: bool = False, drafter: DrafterSettings | str | None = None,
               **_ignored: Any) -> PairRefs:
    """The checks `load_pair` makes before loading anything, on their own: cheap (no weights, no network).

    Takes the same keyword arguments as `load_pair`, so a command can call
    it with its load kwargs before starting an app that loads the models
    later (a wrong path or an uncached hub id is one line and exit 2, not a
    notice inside the app). `window` is the pair's context read from the
    config files, for checking `max_new_tokens` early.
    """
    target, draft, _, _, _, settings, _ = settle_pair(target, draft, pair, demo, drafter)
    t, d = locate_pair(target, draft, allow_pickle=allow_pickle, download=download)
    check_source_files(settings, read_config(t))   # a head that does not fit the target: one line, now
    window = window_of(read_config(t), read_config(d) if d is not None else None)
    return PairRefs(t, d, window)


def _self_spec(draft: str | None, free: str) -> Any:
    """The SelfDraftSpec a `--draft self:…` names (None for a model path), refused beside a drafter `free` that
    needs no draft model ("" when the drafter needs one)."""
    if not is_self_draft(draft):
        return None
    if free:
        raise InvalidParameter(f"--draft {draft} builds a draft model, but --drafter {free} drafts without "
                               "one: leave --draft out")
    from ..drafting.self_draft import parse_self_draft

    return parse_self_draft(str(draft))


def _free_flags() -> str:
    """`--drafter X` for every source that needs no draft model: what a pair without one can draft with."""
    return " or ".join(f"--drafter {n}" for n in MODEL_FREE)


def _resolve_refs(target: str | None, draft: str | None, pair: str | None, demo: bool, free: str = "",
                  self_draft: bool = False) -> tuple[str, str | None, bool, str | None, bool]:
    """(target, draft, vicuna, preset name, is_demo) from paths/hub ids, a preset or the demo pair.

    With a drafter `free` that needs no draft model ("" for one that does) only the target is needed: draft is None.
    A preset's draft model is used unless `draft` names another; one without a
    draft model drafts by its `drafter` (draft None); `--pair demo` is the embedded pair.
    A self-draft (`self_draft`: built from the target, so no draft files) also gives draft None,
    beside any target, a preset's or the demo's.
    """
    lookup = bool(free)
    if lookup and draft is not None:
        raise InvalidParameter(f"--draft names a draft model, but --drafter {free} drafts without one: "
                               "leave --draft out")
    vicuna = False
    preset_name = None
    if pair == DEMO:
        if target or draft:
            raise InvalidParameter("give either --pair or --target/--draft, not both")
        pair, demo = None, True
    if pair is not None:
        if pair not in PRESETS:
            raise InvalidParameter(f"unknown pair {pair!r}; expected one of {', '.join(pair_names())}")
        pre = PRESETS[pair]
        if target or (draft and pre.draft is not None and not self_draft):
            raise InvalidParameter("give either --pair or --target/--draft, not both"
                                   + (f" (--pair {pair} takes --draft: it has no draft model of its own)"
                                      if pre.draft is None and target else ""))
        target, vicuna, preset_name = preset_target(pre), pre.vicuna, pre.name
        draft = None if self_draft else (draft if pre.draft is None else pre.draft)
        lookup = lookup or (draft is None and not self_draft)
    elif target is None and draft is None:
        demo = True
    elif target is None or (draft is None and not lookup and not self_draft):
        raise InvalidParameter("give both --target and --draft (or --pair, or neither for the demo pair)")
    if demo:
        root = resources.require_demo_pair()
        target, draft = str(root / "target"), str(root / "draft")
    if lookup or self_draft:
        draft = None
    assert target is not None and (draft is not None or lookup or self_draft)
    return target, draft, vicuna, preset_name, demo


def settle_pair(target: str | None, draft: str | None, pair: str | None, demo: bool,
                drafter: DrafterSettings | str | None) -> tuple[str, str | None, bool, str | None, bool,
                                                                 DrafterSettings, Any]:
    """(target, draft files or None, vicuna, preset, is_demo, drafter, self-draft spec or None): what to load.

    `drafter=None` is "the pair's default"; a drafter given by name is what
    the user asked for, so `--drafter model` on a preset without a draft
    model is refused, where the default quietly drafts by the preset's own.
    """
    if draft == HEAD and not Path(draft).is_dir():   # `--draft mtp`: the target's own head drafts (a folder wins)
        asked = DrafterSettings.of(drafter).name
        if asked not in (MODEL, HEAD):   # the default drafter (the model) gives way to the head
            raise InvalidParameter(f"--draft mtp drafts with the target's own MTP head: leave --drafter {asked} out")
        draft, drafter = None, drafter if asked == HEAD else HEAD
    named = BY_SOURCE.get(draft.strip().lower()) if isinstance(draft, str) and not Path(draft).is_dir() else None
    if named is not None and not named.loads_draft and not named.head_param:   # `--draft prompt-lookup`
        raise InvalidParameter(f"--draft {draft}: {named.name} drafts without a draft model: use --drafter {named.name}")
    settings = DrafterSettings.of(drafter)
    draft, settings = head_drafter(draft, settings, drafter is not None and not (
        isinstance(drafter, DrafterSettings) and drafter.name == MODEL and not drafter.params()))
    if settings.self_draft:   # `drafter="self:int4"` is `draft="self:int4"` with the model drafting
        if draft is not None and draft != settings.name:
            raise InvalidParameter(f"--drafter {settings.name} builds its own draft: leave --draft out")
        draft, settings = settings.name, DrafterSettings(MODEL)
    pre = PRESETS.get(pair or "")
    asked_model = drafter is not None and settings.name == MODEL and draft is None
    if pre is not None and pre.draft is None and draft is None and settings.loads_draft:
        if asked_model:   # asked for a draft model by name: say there is none, and what drafts by default
            raise InvalidParameter(f"--pair {pre.name} has no draft model: give --draft self:int4 (a 4-bit copy "
                                   "of the target), --draft MODEL, or " + _free_flags()
                                   + (f" (its default: {pre.drafter})" if pre.drafter else ""))
        if is_self_draft(pre.drafter):
            draft = pre.drafter   # a preset whose default drafter is a self-draft
    free = "" if settings.loads_draft else settings.name
    own = _self_spec(draft, free)
    target, draft, vicuna, preset_name, is_demo = _resolve_refs(target, None if own else draft, pair, demo,
                                                                free, own is not None)
    if draft is None and own is None and settings.loads_draft:   # a preset without a draft model
        if drafter is not None:   # asked for a draft model by name: say there is none
            raise InvalidParameter(f"--pair {preset_name} has no draft model: give --draft self:int4 (a 4-bit copy "
                                   "of the target), --draft MODEL, or " + _free_flags())
        settings = DrafterSettings(MODEL_FREE[0])
    return target, draft, vicuna, preset_name, is_demo, settings, own


__all__ = ["PairRefs", "check_pair", "settle_pair"]
