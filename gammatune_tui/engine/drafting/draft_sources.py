"""The draft-source seam: who proposes the tokens a step verifies (a draft model, or a source without one).

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
prefills and rewinds with the target's (kv_cache.py); a source that needs
no draft model has none. Every source is one row of `SOURCES`
(engine/common/names.py: its name, whether it loads a draft model, its own
parameters; registry.py: its class) and one `DraftSource` subclass; `DrafterSettings` is what a user
picks (`--drafter` and the source's flags, `load_pair(drafter=)`,
`SpeculativeDecoder(drafter=)`), checked against the row; `make_source` builds
the row's class (drafting/registry.py) for one session. Nothing here names a source but the model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..common.pair import ModelPair
from ...errors import InvalidParameter
from . import DraftSource, SourceContext
from .registry import CLASSES
# the rows live in names.py, which the command line reads without torch
from ..common.names import BY_SOURCE, DRAFTERS, MODEL, MODEL_FREE, SELF_DRAFTS, SourceSpec, head_source, is_self_draft


def source_spec(name: str) -> SourceSpec:
    """The registry row of a draft source, or one clear line naming the known ones."""
    spec = BY_SOURCE.get(name)
    if spec is None:
        raise InvalidParameter(f"unknown drafter {name!r}; expected one of {', '.join(DRAFTERS + SELF_DRAFTS)}")
    return spec


def _checked(spec: SourceSpec, given: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The source's parameters, every one (defaults filled in), each checked by its row; (name, value) pairs."""
    values = []
    for p in spec.params:
        v = given.get(p.name)
        if v is None:
            v = p.default
        if p.kind is int and (isinstance(v, bool) or not isinstance(v, int)):
            raise InvalidParameter(f"{p.cli_flag} must be {p.range_text()}, got {v!r}")
        try:
            values.append((p.name, p.to_json(p.check(v))))   # as a header records it (a float, not a rational)
        except InvalidParameter:
            raise InvalidParameter(f"{p.cli_flag} must be {p.range_text()}, got {v!r}") from None
    got = dict(values)
    for lo, hi in spec.ordered:
        if got[lo] > got[hi]:
            flag = {p.name: p.cli_flag for p in spec.params}
            raise InvalidParameter(f"{flag[lo]} ({got[lo]}) must not exceed {flag[hi]} ({got[hi]})")
    return tuple(values)


@dataclass(frozen=True, init=False)
class DrafterSettings:
    """Which source drafts (a row of `SOURCES`, or a self-draft such as `self:int4`) and its own parameters.

    A self-draft drafts as a model does: it names a draft model (a quantized
    copy of the target), resolved into a pair whose draft it is before a
    decoder is made (loading/siblings.py `with_draft`).
    `DrafterSettings("prompt-lookup", ngram_max=5)` (or its parameters in its
    row's order, `DrafterSettings("prompt-lookup", 1, 5)`): a parameter not
    given takes its row's default; one the source does not have is refused.
    """

    name: str
    values: tuple[tuple[str, Any], ...]

    def __init__(self, name: str = MODEL, *values: Any, **params: Any):
        if is_self_draft(name):
            from .self_draft import parse_self_draft

            name = parse_self_draft(name).name   # canonical, or one clear line
            spec = BY_SOURCE[MODEL]
        elif name not in BY_SOURCE and head_source(name) is not None:   # `eagle3:PATH`: a head and its folder
            name, folder = head_source(name) or ("", "")
            spec = BY_SOURCE[name]
            params = {spec.head_param: folder, **params}
        else:
            spec = source_spec(name)
        if len(values) > len(spec.params):
            raise InvalidParameter(f"drafter {name!r} takes {len(spec.params)} parameters, got {len(values)}")
        params = {**{p.name: v for p, v in zip(spec.params, values)}, **params}   # positional: in the row's order
        unknown = [k for k in params if k not in {p.name for p in spec.params}]
        if unknown:
            raise InvalidParameter(f"drafter {name!r} has no parameter {unknown[0]!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", _checked(spec, params))

    @property
    def spec(self) -> SourceSpec:
        return BY_SOURCE[MODEL] if self.self_draft else BY_SOURCE[self.name]

    @property
    def loads_draft(self) -> bool:
        """Whether this source drafts with a draft model loaded from files (the model and self-drafts do)."""
        return self.spec.loads_draft

    @property
    def point_mass(self) -> bool:
        """Whether it proposes deterministically from the text (q = δ_x), so one greedy trace replays it."""
        return self.spec.point_mass

    @property
    def hf_peer(self) -> str:
        """The transformers `generate` argument bench races it against: "assistant_model" (assisted generation),
        "prompt_lookup_num_tokens" (transformers' prompt lookup), or "" (none: plain decoding only)."""
        return self.spec.hf_peer

    @property
    def self_draft(self) -> bool:
        return is_self_draft(self.name)

    @property
    def short(self) -> str:
        """A label for compare's contestants (`model`, or the row's short name)."""
        return self.spec.short or self.name

    def param(self, name: str) -> Any:
        return dict(self.values)[name]

    def params(self) -> dict[str, Any]:
        """What a header records beside the name: the source's own parameters (none for the model)."""
        return dict(self.values)

    @classmethod
    def of(cls, value: "DrafterSettings | str | None", **given: Any) -> "DrafterSettings":
        """A settings object from a name (or settings), with the source's parameters where given (not None);
        a parameter of another source (a flag the command line always passes) is left alone."""
        if isinstance(value, DrafterSettings):
            base = value
        elif value is None or isinstance(value, str):
            base = cls(value or MODEL)
        else:
            raise InvalidParameter(f"drafter must be a name or DrafterSettings, got {type(value).__name__}")
        own = {p.name for p in base.spec.params}
        changes = {k: v for k, v in given.items() if v is not None and k in own}
        if not changes:
            return base
        return cls(base.name, **{**base.params(), **changes})


def parse_drafters(text: str) -> list[str]:
    """'model,self:int4,prompt-lookup,eagle3:./head' → the names; known names (self-drafts canonical, a head
    with its folder, a head's folder named alone as NAME:folder), no duplicates."""
    names = [p.strip() for p in str(text).split(",") if p.strip()]
    known = ", ".join(DRAFTERS + SELF_DRAFTS)
    if not names:
        raise InvalidParameter(f"--drafters must name at least one of {known}")
    for i, n in enumerate(names):
        if is_self_draft(n):
            from .self_draft import parse_self_draft

            names[i] = parse_self_draft(n).name
        elif n not in DRAFTERS and head_source(n) is None:
            found = head_source(n, folder_config(n))   # a head's folder, recognised by its config
            if found is None:
                raise InvalidParameter(f"unknown drafter {n!r} in --drafters; expected {known}")
            names[i] = f"{found[0]}:{n}"
    if len(set(names)) != len(names):
        raise InvalidParameter(f"--drafters names a drafter twice: {text!r}")
    return names


def pair_drafter(pair: ModelPair) -> DrafterSettings:
    """The drafter a pair's sessions use unless told otherwise: what it was loaded for, else the model
    (a pair without one: the first source that needs none)."""
    if isinstance(pair.drafter, DrafterSettings):
        return pair.drafter
    if pair.draft is None:
        return DrafterSettings(MODEL_FREE[0])
    return DrafterSettings(MODEL)


def source_class(spec: SourceSpec) -> type[DraftSource]:
    """The class that drafts for a row (registry.py: bound by import)."""
    return CLASSES[spec.name]


def folder_config(draft: object) -> dict[str, Any] | None:
    """A local folder's config.json as a dict (None: not a local folder, no config, not JSON)."""
    import json
    from pathlib import Path

    if not isinstance(draft, str) or ":" in draft.split("/")[0] and not Path(draft).exists():
        return None
    try:
        cfg = json.loads((Path(draft).expanduser() / "config.json").read_text())
    except (OSError, ValueError):
        return None
    return cfg if isinstance(cfg, dict) else None


def head_drafter(draft: str | None, settings: DrafterSettings, asked: bool) -> tuple[str | None, DrafterSettings]:
    """(draft, settings) with a `--draft` that names a head (`eagle3:PATH`, or a folder whose config is a head's)
    turned into its source with the folder as its parameter, and no draft model; anything else unchanged.
    `asked`: the drafter was named by the user, so another source beside the head is one line."""
    found = head_source(draft, folder_config(draft))
    if found is None:
        return draft, settings
    name, folder = found
    spec = BY_SOURCE[name]
    if not folder.strip():
        raise InvalidParameter(f"--draft {name}: needs its head's folder: --draft {name}:PATH")
    if asked and settings.name not in (MODEL, name):
        raise InvalidParameter(f"--draft {draft} is an {name} head, but --drafter {settings.name} drafts another "
                               "way: give one of them")
    own = settings.params() if settings.name == name else {}
    return None, DrafterSettings(name, **{**own, spec.head_param: folder})


def check_source_files(settings: DrafterSettings, target_config: Any) -> None:
    """A source read from its own folder (a head) checked against the target's config before any weights load."""
    source_class(settings.spec).check_files(settings.params(), target_config)


def prepare_source(settings: DrafterSettings, target: Any) -> str:
    """The source's load-time work over the loaded target (`DraftSource.prepare`): the words naming it, or ""."""
    return source_class(settings.spec).prepare(settings.params(), target)


def make_source(settings: DrafterSettings, made: SourceContext) -> DraftSource:
    """The source for one session, built by its row's class (a self-draft's pair has it as its draft model).

    `made.previous` is the same decoder's last session's source: a source that keeps something across a
    conversation's turns takes it over from there (`DraftSource.create`)."""
    return source_class(settings.spec).create(settings.params(), made)


__all__ = [
    "MODEL", "DRAFTERS", "DrafterSettings", "source_spec", "source_class",
    "parse_drafters", "pair_drafter", "DraftSource", "make_source", "head_drafter", "folder_config", "check_source_files", "prepare_source",
]
