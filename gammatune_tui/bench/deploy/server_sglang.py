"""`doctor --server-log` on SGLang's per-request speculative metadata: a `/generate` response's `meta_info`.

SGLang writes (python/sglang/srt/managers/tokenizer_manager.py, `_calculate_spec_decoding_metrics`):

    spec_verify_ct                    verify steps of the request
    spec_num_correct_drafts           draft tokens accepted   (aliases: spec_accepted_drafts; older
                                                               releases: spec_accept_token_num)
    spec_num_proposed_drafts          draft tokens proposed   (aliases: spec_proposed_drafts; older
                                                               releases: spec_draft_token_num)
    spec_correct_drafts_histogram     H[n]: steps that accepted exactly n drafts (alias: spec_accept_histogram)
    spec_accept_length, spec_accept_rate   derived: completion tokens / steps, accepted / proposed

A file may hold one response, a JSON list of them, or one per line; they are
summed, and each is also kept apart with its `prompt_tokens` (for the
long-context pitfall, bench/doctor/pitfalls_data.py). SGLang reports no window: K is the histogram's last slot (a line under
the verdict says so), or the proposed drafts per step where that is larger.
Like vLLM's histogram it gives per-position shares but no per-step arrays, so
each K′ < K is predicted in expectation.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .server_counts import NothingToGoOn, Request, ServerLog, add_histogram, count, survival_of

ALIASES = {   # the name SGLang writes now, then the older or alias names of the same count
    "accepted": ("spec_num_correct_drafts", "spec_accepted_drafts", "spec_accept_token_num"),
    "proposed": ("spec_num_proposed_drafts", "spec_proposed_drafts", "spec_draft_token_num"),
    "histogram": ("spec_correct_drafts_histogram", "spec_accept_histogram"),
}


def sglang_meta(obj: Any) -> dict | None:
    """The `meta_info` of one SGLang response (or the block itself) when it carries spec-decode counts."""
    if not isinstance(obj, dict):
        return None
    meta = obj.get("meta_info", obj)
    return meta if isinstance(meta, dict) and "spec_verify_ct" in meta else None


def _field(meta: dict, what: str) -> Any:
    for name in ALIASES[what]:
        if name in meta:
            return meta[name]
    raise ValueError(f"{ALIASES[what][0]} is missing (nor {' or '.join(ALIASES[what][1:])})")


def read_sglang(metas: Sequence[dict]) -> ServerLog:
    """Sum the responses' counts into one ServerLog; ValueError naming the field that is wrong."""
    steps = drafted = accepted = 0
    hist: list[int] = []
    requests = []
    for meta in metas:
        n = count(meta["spec_verify_ct"], "spec_verify_ct")
        a = count(_field(meta, "accepted"), ALIASES["accepted"][0])
        d = count(_field(meta, "proposed"), ALIASES["proposed"][0])
        if n == 0:
            continue   # a request that never speculated (too short, or finished in its prefill)
        h = _field(meta, "histogram")
        if not isinstance(h, list) or not h:
            raise ValueError(f"{ALIASES['histogram'][0]} must be a list of step counts, got {h!r}")
        for j, c in enumerate(h):
            count(c, f"{ALIASES['histogram'][0]}[{j}]")
        if a > d:
            raise ValueError(f"{ALIASES['accepted'][0]} {a} is more than {ALIASES['proposed'][0]} {d}")
        if sum(h) != n:
            raise ValueError(f"the histogram counts {sum(h)} steps, spec_verify_ct says {n}")
        if sum(j * c for j, c in enumerate(h)) != a:
            raise ValueError(f"the histogram accepts {sum(j * c for j, c in enumerate(h))} drafts, "
                             f"{ALIASES['accepted'][0]} says {a}")
        add_histogram(hist, h)
        prompt = meta.get("prompt_tokens")
        requests.append(Request(n, d, a, None if prompt is None else count(prompt, "prompt_tokens")))
        steps, drafted, accepted = steps + n, drafted + d, accepted + a
    if steps == 0:
        raise NothingToGoOn("spec_verify_ct is 0 in every response: no speculative step, nothing to go on")
    k = max(len(hist) - 1, math.ceil(drafted / steps), 1)
    if drafted > steps * k:
        raise ValueError(f"{ALIASES['proposed'][0]} {drafted} is more than {steps} steps × K {k}")
    survival = survival_of(hist, steps)
    notes = [f"SGLang reports no window: K = {k} is taken from the histogram's slots and the drafts proposed "
             "per step", "SGLang's histogram gives per-position shares but no per-step arrays: each K′ < K is "
             "predicted in expectation"]
    return ServerLog("SGLang", k, steps, drafted, accepted, survival, len(metas), None, notes, requests)


__all__ = ["read_sglang", "sglang_meta"]
