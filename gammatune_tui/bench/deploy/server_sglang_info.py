"""`doctor --server-log` on SGLang's `/server_info` (`/get_server_info` in older releases): a mean, and no more.

The response (python/sglang/srt/entrypoints/http_server.py, `get_server_info`) is the server's arguments
flattened at the top (`speculative_algorithm`, `speculative_num_steps`, `speculative_eagle_topk`,
`speculative_num_draft_tokens`, …), `version`, and `internal_states`: one scheduler state per data-parallel
rank (python/sglang/srt/managers/scheduler_components/internal_state.py, `_add_speculative`), which carries

    avg_spec_accept_length   spec_total_num_accept_tokens / spec_total_num_forward_ct: tokens per verify step,
                             the bonus token included (metrics_reporter.py counts accepted drafts + 1 per step),
                             cumulative since the server started; absent before the first speculative step

(newer releases also copy the resolved server arguments into each state, so K is found there too).

What it lacks: no histogram, no step counts, no per-request data. The mean acceptance length at K and the
draft acceptance rate can be concluded; the per-position shares cannot, so a window K′ < K is given as a
range: from K′/K of the mean accepted (acceptance spread evenly over the positions, the worst a prefix can
do) to min(K′, the mean) (all of it at the front). What to fetch instead: the `/generate` responses'
`meta_info` (`spec_correct_drafts_histogram`, read by server_sglang.py), which has the shares.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .server_counts import NothingToGoOn, ServerLog, count

MEAN = "avg_spec_accept_length"


def server_info(obj: Any) -> dict | None:
    """The response itself when it is a /server_info answer (it has `internal_states`), else None."""
    return obj if isinstance(obj, dict) and "internal_states" in obj else None


def _arg(info: dict, states: list[dict], name: str) -> Any:
    """A server argument: at the top of the response, else in a scheduler state (newer releases copy it there)."""
    if info.get(name) is not None:
        return info[name]
    return next((s[name] for s in states if s.get(name) is not None), None)


def read_server_info(infos: Sequence[dict]) -> ServerLog:
    """The last /server_info in the file (the counts are cumulative: the last is the longest window)."""
    info = infos[-1]
    states = info["internal_states"]
    if not isinstance(states, list) or not all(isinstance(s, dict) for s in states):
        raise ValueError("internal_states must be a list of scheduler states (objects)")
    means = []
    for i, s in enumerate(states):
        v = s.get(MEAN)
        if v is None:
            continue   # this rank has not speculated yet (or SGLang's placeholder state)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 1:
            raise ValueError(f"internal_states[{i}].{MEAN} must be a mean length of at least 1, got {v!r}")
        means.append(float(v))
    algorithm = _arg(info, states, "speculative_algorithm")
    if not means:
        raise NothingToGoOn(f"SGLang /server_info: no internal state has {MEAN}: " +
                            ("the server does not speculate (speculative_algorithm is null)" if algorithm is None
                             and "speculative_algorithm" in info else "no speculative step yet, nothing to go on"))
    k_raw = _arg(info, states, "speculative_num_steps")
    if k_raw is None:
        raise ValueError("speculative_num_steps is missing: K is unknown (give the whole /server_info response, "
                         "whose top level holds the server's arguments)")
    k = count(k_raw, "speculative_num_steps")
    if k < 1:
        raise ValueError("speculative_num_steps must be at least 1")
    mean = sum(means) / len(means)
    if mean > k + 1 + 1e-9:
        raise ValueError(f"{MEAN} {mean:g} is more than K + 1 = {k + 1} (speculative_num_steps {k})")
    topk = _arg(info, states, "speculative_eagle_topk")
    tokens = _arg(info, states, "speculative_num_draft_tokens")
    tree = isinstance(topk, int) and not isinstance(topk, bool) and topk > 1
    drafted = float(count(tokens, "speculative_num_draft_tokens") - 1) if tree and tokens else float(k)
    version = info.get("version")
    release = f" {version}" if isinstance(version, str) and version else ""
    notes = [f"SGLang{release}'s /server_info holds only {MEAN} ({mean:.2f}, cumulative since the server started): no "
             "histogram and no step counts, so the per-position shares are unknown and each K′ < K is a range, "
             "from acceptance spread evenly over the positions to all of it at the front; for the shares, give "
             "the /generate responses (meta_info.spec_correct_drafts_histogram) instead"]
    if len(means) > 1:
        notes.append(f"{len(means)} data-parallel ranks report a mean: averaged unweighted ("
                     + ", ".join(f"{m:.2f}" for m in means) + "; the server reports no step counts to weigh them)")
    if tree:
        notes.append(f"a tree (speculative_eagle_topk {topk}) verifies {drafted:g} drafts per step; the mean counts "
                     "the accepted path, and each K′ is priced as a chain")
    return ServerLog("SGLang", k, 0, 0, 0, [], 0, None, notes, None, (mean - 1, drafted))


__all__ = ["MEAN", "read_server_info", "server_info"]
