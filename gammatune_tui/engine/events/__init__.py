"""The event stream of docs/spec.md §3: the one contract between the engine and everything else.

The TUI, the recorder, replay, compare and the benchmark all read these and
nothing else, so a recorded session and a live one are indistinguishable
downstream. `to_json()` gives the recording form; `event_from_json()` reads it
back, strictly, because recordings are untrusted input.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, ClassVar, Literal, Union

from .json_fields import EventFormatError, _dict, _entropy, _int, _list, _num, _prob, _str
from .schema_migration import V1_HEADER_DEFAULTS, V1_SUMMARY_DEFAULTS, upgrade_v1

TargetKind = Literal["correction", "bonus"]
"""The target's own token after the accepted run: a correction (a draft was rejected) or a bonus (none was)."""
StopReason = Literal["eos", "max_new_tokens", "stopped", "error"]
"""Why a session ended: its end-of-turn token, its budget, a stop asked for, or an error."""

SCHEMA_VERSION = 2   # schema 1 files are upgraded as they are read (schema_migration.py)
READABLE_SCHEMAS = (1, 2)

Source = Literal["draft", "target"]


@dataclass(frozen=True)
class DraftedToken:
    """One token the draft proposed this step.

    `top_prob` and `chosen_prob` are read from the draft's served distribution
    (what the policies see); `target_prob` is p(x) under the target's served
    distribution, so min(1, p/q) can be shown without the models. A model-free
    source (prompt lookup) records its stand-ins (a match confidence) as
    `top_prob`/`chosen_prob` and sets `q_prob`, the true proposal probability
    q(x) = 1 of its point mass; None (the JSON omits it) means q(x) = chosen_prob.
    `entropy` is H(q) in nats of the law `top_prob` comes from (0 for a point
    mass); None (the JSON omits it) where it was not measured.
    """

    id: int
    text: str
    top_prob: float
    chosen_prob: float
    target_prob: float = float("nan")
    q_prob: float | None = None
    entropy: float | None = None

    @property
    def proposal_prob(self) -> float:
        """q(x): the probability the proposal law gave this token (what the accept test divides by)."""
        return self.chosen_prob if self.q_prob is None else self.q_prob

    @property
    def accept_prob(self) -> float:
        q = self.proposal_prob
        if q <= 0 or math.isnan(self.target_prob):
            return float("nan")
        return min(1.0, self.target_prob / q)


@dataclass(frozen=True)
class TargetToken:
    """The token the target adds after the accepted run: a correction or a bonus."""

    id: int
    text: str
    kind: TargetKind


@dataclass(frozen=True)
class EmittedToken:
    id: int
    text: str
    source: Source


@dataclass(frozen=True)
class SessionHeader:
    type: ClassVar[str] = "header"
    target: str
    draft: str
    tokenizer: str
    device: str
    dtype: str
    method: str
    gamma0: int
    params: dict[str, Any]
    sampling: dict[str, Any]
    max_new_tokens: int
    prompt_ids: list[int]
    prompt: str
    prompt_pieces: list[str] = field(default_factory=list)
    seed: int | None = None
    demo: bool = False
    versions: dict[str, str] = field(default_factory=dict)
    created: float = 0.0
    label: str = ""
    turn: int = 0
    user_text: str = ""
    engine: str = ""  # what was asked for: auto, eager, static, graphs
    runner: str = ""  # what runs: eager, static or graphs ("target/draft" when the two differ)
    warmup_s: float = 0.0  # untimed warm-up (and graph capture) after loading, seconds
    load_s: dict[str, float] = field(default_factory=dict)  # loading's stages → seconds
    drafter: str = ""  # the draft source: "model" or "prompt-lookup"
    drafter_params: dict[str, Any] = field(default_factory=dict)  # prompt lookup: ngram_min, ngram_max
    end_ids: list[int] = field(default_factory=list)  # ids that end a turn (no text; shown as ⟨end of turn⟩)
    # each model as it ran: precision ("float32", "int4 g32", "int8 (quanto)") and weight bytes (a self-draft:
    # what it adds to the target's); "" and 0 where not known and where no model drafts
    target_precision: str = ""
    draft_precision: str = ""
    target_bytes: int = 0
    draft_bytes: int = 0
    schema: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}


@dataclass(frozen=True)
class StepEvent:
    type: ClassVar[str] = "step"
    step: int
    method: str
    params: dict[str, Any]
    gamma: int
    drafted: list[DraftedToken]
    accepted: int
    target_token: TargetToken | None
    emitted: list[EmittedToken]
    gamma_next: int
    draft_s: float
    verify_s: float
    step_s: float = 0.0
    elapsed_s: float = 0.0
    early_stop: bool = False
    settings_changed: bool = False
    # the sampling in force from this step, on a step that changed settings ({} otherwise, and not written):
    # what lets a mark say "T 0.7 → 0" (the header holds the sampling a session began with)
    sampling: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = {"type": self.type, **asdict(self)}
        if not d["sampling"]:
            del d["sampling"]
        for t in d["drafted"]:  # q_prob only where it differs from chosen_prob (model-free sources)
            if t["q_prob"] is None:
                del t["q_prob"]
            if t["entropy"] is None:   # not measured
                del t["entropy"]
        return _nan_to_none(d)


@dataclass(frozen=True)
class SessionSummary:
    type: ClassVar[str] = "summary"
    tokens: int
    steps: int
    acceptance_rate: float
    tokens_per_step: float
    tokens_per_s: float
    stop_reason: StopReason
    drafted: int = 0
    accepted: int = 0
    target_calls: int = 0
    draft_calls: int = 0
    wall_s: float = 0.0
    draft_s: float = 0.0
    verify_s: float = 0.0
    per_position: list[float] = field(default_factory=list)
    text: str = ""
    error: str = ""
    drafter: str = ""  # the draft source that drafted

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}


Event = Union[SessionHeader, StepEvent, SessionSummary]


def _nan_to_none(obj: Any) -> Any:
    """JSON has no NaN; a missing probability is written as null."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj


# -- reading back (untrusted) -----------------------------------------------------


def _require(d: dict, keys: dict[str, Any]) -> None:
    """Schema 2 writes every key; one missing is damage (schema 1's are added by its upgrade first)."""
    for key in keys:
        if d.get(key) is None:
            raise EventFormatError(f"missing {key!r} (schema {SCHEMA_VERSION} records it)")


def _header(d: dict) -> SessionHeader:
    _require(d, V1_HEADER_DEFAULTS)
    prompt_ids = _list(d, "prompt_ids")
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in prompt_ids):
        raise EventFormatError("'prompt_ids' must be a list of non-negative integers")
    pieces = _list(d, "prompt_pieces", optional=True)
    if not all(isinstance(p, str) for p in pieces):
        raise EventFormatError("'prompt_pieces' must be a list of strings")
    versions = {str(k): str(v) for k, v in _dict(d, "versions").items()}
    seed = d.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise EventFormatError("'seed' must be an integer or null")
    if _num(d, "warmup_s", optional=True) < 0:
        raise EventFormatError("'warmup_s' must be >= 0")
    load_s = _dict(d, "load_s")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf")
               for v in load_s.values()):
        raise EventFormatError("'load_s' must map stages to seconds >= 0")
    end_ids = _list(d, "end_ids", optional=True)
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in end_ids):
        raise EventFormatError("'end_ids' must be a list of non-negative integers")
    return SessionHeader(
        target=_str(d, "target"), draft=_str(d, "draft"), tokenizer=_str(d, "tokenizer"),
        device=_str(d, "device"), dtype=_str(d, "dtype"), method=_str(d, "method"),
        gamma0=_int(d, "gamma0", optional=True, default=1, minimum=1),
        params=_dict(d, "params"), sampling=_dict(d, "sampling"),
        max_new_tokens=_int(d, "max_new_tokens", optional=True),
        prompt_ids=list(prompt_ids), prompt=_str(d, "prompt"), prompt_pieces=list(pieces),
        seed=seed, demo=bool(d.get("demo", False)), versions=versions,
        created=_num(d, "created", optional=True), label=_str(d, "label"),
        turn=_int(d, "turn", optional=True), user_text=_str(d, "user_text"),
        engine=_str(d, "engine"), runner=_str(d, "runner"), warmup_s=_num(d, "warmup_s", optional=True),
        load_s={str(k): float(v) for k, v in load_s.items()}, drafter=_str(d, "drafter"), drafter_params=_dict(d, "drafter_params"),
        end_ids=list(end_ids),
        target_precision=_str(d, "target_precision"), draft_precision=_str(d, "draft_precision"),
        target_bytes=_int(d, "target_bytes", optional=True), draft_bytes=_int(d, "draft_bytes", optional=True),
    )


def _token_fields(t: object, what: str) -> dict:
    if not isinstance(t, dict):
        raise EventFormatError(f"each {what} entry must be an object")
    return t


def _step(d: dict) -> StepEvent:
    drafted = []
    for t in _list(d, "drafted"):
        t = _token_fields(t, "drafted")
        drafted.append(DraftedToken(
            id=_int(t, "id"), text=_str(t, "text"),
            top_prob=_prob(t, "top_prob"), chosen_prob=_prob(t, "chosen_prob"),
            target_prob=_prob(t, "target_prob"), q_prob=_prob(t, "q_prob") if t.get("q_prob") is not None else None,
            entropy=_entropy(t),
        ))
    emitted = []
    for t in _list(d, "emitted"):
        t = _token_fields(t, "emitted")
        source = t.get("source")
        if source not in ("draft", "target"):
            raise EventFormatError("emitted 'source' must be 'draft' or 'target'")
        emitted.append(EmittedToken(id=_int(t, "id"), text=_str(t, "text"), source=source))
    tt = d.get("target_token")
    target_token = None
    if tt is not None:
        tt = _token_fields(tt, "target_token")
        kind = tt.get("kind")
        if kind not in ("correction", "bonus"):
            raise EventFormatError("target_token 'kind' must be 'correction' or 'bonus'")
        target_token = TargetToken(id=_int(tt, "id"), text=_str(tt, "text"), kind=kind)
    accepted = _int(d, "accepted")
    if accepted > len(drafted):
        raise EventFormatError("'accepted' is larger than the number of drafted tokens")
    gamma = _int(d, "gamma", minimum=0)  # 0: costaware's plain target step
    return StepEvent(
        step=_int(d, "step"), method=_str(d, "method"), params=_dict(d, "params"), gamma=gamma,
        drafted=drafted, accepted=accepted, target_token=target_token, emitted=emitted,
        gamma_next=_int(d, "gamma_next", optional=True, default=gamma, minimum=0),
        draft_s=_num(d, "draft_s", optional=True), verify_s=_num(d, "verify_s", optional=True),
        step_s=_num(d, "step_s", optional=True), elapsed_s=_num(d, "elapsed_s", optional=True),
        early_stop=bool(d.get("early_stop", False)), settings_changed=bool(d.get("settings_changed", False)),
        sampling=_dict(d, "sampling"),
    )


def _summary(d: dict) -> SessionSummary:
    _require(d, V1_SUMMARY_DEFAULTS)
    reason = d.get("stop_reason")
    if reason not in ("eos", "max_new_tokens", "stopped", "error"):
        raise EventFormatError(f"unknown stop_reason {reason!r}")
    per_pos = _list(d, "per_position", optional=True)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in per_pos):
        raise EventFormatError("'per_position' must be a list of numbers")
    return SessionSummary(
        tokens=_int(d, "tokens"), steps=_int(d, "steps"),
        acceptance_rate=_num(d, "acceptance_rate"), tokens_per_step=_num(d, "tokens_per_step"),
        tokens_per_s=_num(d, "tokens_per_s"), stop_reason=reason,
        drafted=_int(d, "drafted", optional=True), accepted=_int(d, "accepted", optional=True),
        target_calls=_int(d, "target_calls", optional=True), draft_calls=_int(d, "draft_calls", optional=True),
        wall_s=_num(d, "wall_s", optional=True), draft_s=_num(d, "draft_s", optional=True),
        verify_s=_num(d, "verify_s", optional=True), per_position=[float(x) for x in per_pos],
        text=_str(d, "text"), error=_str(d, "error"), drafter=_str(d, "drafter"),
    )


_READERS: dict[str, Callable[[dict], Event]] = {"header": _header, "step": _step, "summary": _summary}


def event_from_json(d: object, schema: int = SCHEMA_VERSION) -> Event:
    """Build an event from its JSON object; raises EventFormatError naming what is wrong.

    A header names its own schema; a step or summary is read in the schema of the header before it (`schema`).
    """
    if not isinstance(d, dict):
        raise EventFormatError("an event must be a JSON object")
    kind = d.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        raise EventFormatError(f"unknown event type {kind!r}")
    version: object = schema   # a header's own, as written: checked before it is believed
    if kind == "header":
        version = d.get("schema")
        if version not in READABLE_SCHEMAS or isinstance(version, bool):
            raise EventFormatError(f"unknown schema {version!r} (this gammatune reads schemas "
                                   f"{', '.join(map(str, READABLE_SCHEMAS))})")
    if version == 1:
        d = upgrade_v1(d)
    return reader(d)


__all__ = [
    "SCHEMA_VERSION", "READABLE_SCHEMAS", "DraftedToken", "TargetToken", "EmittedToken", "SessionHeader",
    "StepEvent", "SessionSummary", "Event", "StopReason", "TargetKind", "EventFormatError", "event_from_json",
]
