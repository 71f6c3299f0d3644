"""Recordings of schema 1, upgraded to schema 2 as they are read: the one place that knows what an old file meant.

Schema 1 grew keys while its number stayed 1, so a schema-1 file may lack
any key added after its first release. Schema 2 writes every one of them
and its reader requires them: a missing key in a schema-2 file is damage,
not age. A schema-1 object is upgraded here, before the schema-2 reader
sees it, with the value each missing key meant when it was absent. The
upgrade only adds keys: what a file holds is read as it was written, so an
old recording replays exactly as it did.
"""

from __future__ import annotations

from typing import Any

# The header keys schema 1 may lack, each with what its absence meant.
V1_HEADER_DEFAULTS: dict[str, Any] = {
    "engine": "",             # not recorded: the runner was not chosen yet
    "runner": "",
    "warmup_s": 0.0,          # no warm-up timed
    "load_s": {},             # loading not split into stages
    "drafter": "",            # not named: the draft model drafted
    "drafter_params": {},
    "end_ids": [],            # only the token an eos-ended session ended on is known to end a turn
    "target_precision": "",   # not recorded
    "draft_precision": "",
    "target_bytes": 0,
    "draft_bytes": 0,
}

# The summary keys schema 1 may lack. A step gained only keys whose absence is also valid in schema 2
# (`entropy`: not measured; `q_prob`: q(x) is `chosen_prob`; `sampling`: settings unchanged).
V1_SUMMARY_DEFAULTS: dict[str, Any] = {
    "drafter": "",
}

# looked up by an event's "type", which a damaged event may lack (None: no defaults)
_DEFAULTS: dict[str | None, dict[str, Any]] = {"header": V1_HEADER_DEFAULTS, "summary": V1_SUMMARY_DEFAULTS}


def upgrade_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 event object as schema 2 reads it: the keys it lacks added (copies of the defaults), the rest as
    written. The header's `schema` becomes 2."""
    defaults = _DEFAULTS.get(obj.get("type"), {})
    out = {k: _copy(v) for k, v in defaults.items() if obj.get(k) is None}
    out.update((k, v) for k, v in obj.items() if not (k in defaults and v is None))
    if obj.get("type") == "header":
        out["schema"] = 2
    return out


def _copy(v: object) -> object:
    return dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v


__all__ = ["V1_HEADER_DEFAULTS", "V1_SUMMARY_DEFAULTS", "upgrade_v1"]
