"""`doctor --server-log` on TensorRT-LLM's per-request spec-decode payload, and on AIPerf's engine-neutral record.

TensorRT-LLM's OpenAI server attaches to the choice that carries `finish_reason` (AIPerf's
`spec_decode/trtllm_adapter.py` reads the same keys):

    speculative_decoding: {num_spec_steps, total_draft_tokens, total_accepted_draft_tokens,
                           acceptance_histogram (dense: H[n] = steps that accepted n drafts),
                           num_spec_tokens (null under draft_len_schedule), acceptance_rate}

It sends no mean acceptance length (1 + accepted / steps, derived here) and no
per-step arrays, so each K′ < K is predicted in expectation. With
`num_spec_tokens` null the window varied by batch size: K is then the
histogram's last slot, and a line under the verdict says so.

AIPerf's `SpecDecodeAcceptanceRecord` (one per request, in its records export)
uses vLLM's own names (`num_spec_steps`, `num_accepted_draft_tokens`, a sparse
`acceptance_histogram`…) and is read by vLLM's reader; its `engine` field names
the server it came from, which the verdict then names too (server_log.py).

A file may hold one response, a JSON list of them, or one per line; they are
summed, each checked: the histogram sums to the steps and accepts what the
counts say, and no more is accepted than was drafted.
"""

from __future__ import annotations

from typing import Any, Sequence

from .server_counts import NothingToGoOn, Request, ServerLog, add_histogram, count, prompt_tokens, survival_of

KEYS = ("num_spec_steps", "total_draft_tokens", "total_accepted_draft_tokens", "acceptance_histogram")


def trtllm_block(obj: Any) -> dict | None:
    """The `speculative_decoding` block of one TensorRT-LLM response (or the block itself), else None."""
    if not isinstance(obj, dict):
        return None
    if "num_spec_steps" in obj and "total_draft_tokens" in obj:
        return obj
    choices = obj.get("choices")
    for holder in [obj, *(c for c in (choices if isinstance(choices, list) else []) if isinstance(c, dict))]:
        block = holder.get("speculative_decoding")
        if isinstance(block, dict) and "num_spec_steps" in block and "total_draft_tokens" in block:
            return block
    return None


def read_trtllm(pairs: Sequence[tuple[Any, dict]]) -> ServerLog:
    """Sum the responses' counts (each response with its block) into one ServerLog, each request also kept apart
    with its prompt length; ValueError naming the field that is wrong or missing."""
    steps = drafted = accepted = 0
    hist: list[int] = []
    windows: set[int | None] = set()
    requests = []
    for obj, block in pairs:
        missing = [k for k in KEYS if k not in block]
        if missing:
            raise ValueError(f"{missing[0]} is missing")
        n = count(block["num_spec_steps"], "num_spec_steps")
        d = count(block["total_draft_tokens"], "total_draft_tokens")
        a = count(block["total_accepted_draft_tokens"], "total_accepted_draft_tokens")
        h = block["acceptance_histogram"]
        if not isinstance(h, list) or not h:
            raise ValueError(f"acceptance_histogram must be a list of step counts, got {h!r}")
        for j, c in enumerate(h):
            count(c, f"acceptance_histogram[{j}]")
        k = block.get("num_spec_tokens")
        if k is not None:
            count(k, "num_spec_tokens")
            if len(h) > k + 1:
                raise ValueError(f"acceptance_histogram has {len(h)} entries; num_spec_tokens {k} allows {k + 1}")
        if a > d:
            raise ValueError(f"total_accepted_draft_tokens {a} is more than total_draft_tokens {d}")
        if sum(h) != n:
            raise ValueError(f"the histogram counts {sum(h)} steps, num_spec_steps says {n}")
        if sum(j * c for j, c in enumerate(h)) != a:
            raise ValueError(f"the histogram accepts {sum(j * c for j, c in enumerate(h))} drafts, "
                             f"total_accepted_draft_tokens says {a}")
        if n == 0:
            continue   # a request that never speculated
        windows.add(k)
        requests.append(Request(n, d, a, prompt_tokens(obj)))
        add_histogram(hist, h)
        steps, drafted, accepted = steps + n, drafted + d, accepted + a
    if steps == 0:
        raise NothingToGoOn("num_spec_steps is 0 in every response: no speculative step, nothing to go on")
    given = [w for w in windows if w is not None]
    k = max(given) if given and None not in windows else max(len(hist) - 1, 1)
    survival = survival_of(hist, steps)
    notes = ["TensorRT-LLM sends no mean acceptance length (derived: 1 + accepted / steps) and no per-step arrays: "
             "each K′ < K is predicted in expectation"]
    if None in windows:
        notes.insert(0, f"num_spec_tokens is null (draft_len_schedule: the window varied by batch size): K = {k} "
                        "is taken from the histogram's slots")
    return ServerLog("TensorRT-LLM", k, steps, drafted, accepted, survival, len(pairs), None, notes, requests)


__all__ = ["read_trtllm", "trtllm_block"]
