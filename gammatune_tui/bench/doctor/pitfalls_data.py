"""`doctor --server-log FILE`: the pitfalls a server's own acceptance data shows, one line each with its source.

pitfalls.py reads a pasted command line; what only a measurement shows is
read here, from the server log as `--server-log` parsed it and from the
server view beside it (bench/deploy/server_view.py: the pair's hindsight at
the server's K over the doctor's own traces, and every K′ ≤ K priced):

* episodic zero acceptance: a run of steps accepting nothing inside one request,
  too long for the log's own share of zero steps to explain (vLLM #55357:
  repetition loops). Needs per-step arrays (vLLM's `detailed` metrics);
* position-1 collapse: few steps accept the first draft while those that do
  mostly accept the next ones too, or far fewer than the pair's hindsight
  (LightLLM PR #1402: the draft fed the wrong hidden state; vLLM's
  `draft_sample_method` greedy at temperature > 0);
* K past the best: the server's K is predicted slower than a smaller K′ under
  the same costs (the verdict's own ranking, ServerView.best);
* long-context decay: acceptance by prompt-length bucket falls with the length
  (vLLM #52258). Needs each request's prompt length.

A log that cannot show a pitfall says which and why, in one line (`unchecked`),
rather than passing it silently. The thresholds are named below; each says why.
"""

from __future__ import annotations

import math
from typing import Callable

from ..deploy.server_counts import Request, ServerLog
from ..deploy.server_view import ServerView, knob

ZERO_RUN = 8            # steps in a row accepting nothing before a run is worth a line
ZERO_RUN_CHANCE = 0.01  # … and only when the log's own zero-step share makes such a run this unlikely anywhere
FIRST_LOW = 0.3         # position 1 accepted in fewer steps than this …
LATER_HIGH = 0.6        # … while this share of the drafts after an accepted one are accepted too
HINDSIGHT_GAP = 0.3     # or position 1 this far (and at least half) below the pair's own hindsight
MIN_STEPS = 20          # steps a share must rest on (a bucket, position 1) before it is compared
K_MARGIN = 1.02         # a smaller K′ must beat the server's K by 2 % (timings move more than that)
BUCKETS = (1024, 4096, 16384, 65536)   # prompt-length bucket edges, tokens
DECAY = 0.75            # the longest bucket's accepted drafts per step below this share of the shortest's …
DECAY_MIN = 0.3         # … and at least this many drafts per step fewer


def _pct(x: float) -> str:
    return f"{x:.0%}"


def zero_runs(log: ServerLog) -> tuple[str | None, str | None]:
    """(the line, or None) and (why it cannot be checked, or None): episodic zero-acceptance runs."""
    requests = [r for r in log.per_request or [] if r.per_step]
    if not requests:
        return None, ("episodic zero-acceptance runs (need per-step arrays: vLLM's --per-request-spec-decode-metrics "
                      "detailed)")
    steps = [(a, d) for r in requests for a, d in r.per_step or [] if d > 0]
    zero = sum(1 for a, _ in steps if a == 0) / len(steps) if steps else 0.0
    runs = []   # (length, request index, first step)
    for i, r in enumerate(log.per_request or []):
        run = 0
        for j, (a, d) in enumerate((r.per_step or []) + [(1, 1)]):   # a sentinel step ends the last run
            if a == 0 and d > 0:
                run += 1
                continue
            if run >= ZERO_RUN:
                runs.append((run, i, j - run))
            run = 0
    runs = [x for x in runs if zero ** x[0] * len(steps) < ZERO_RUN_CHANCE]
    if not runs:
        return None, None
    n, i, first = max(runs)
    others = f" ({len(runs)} such runs in {len({x[1] for x in runs})} request(s))" if len(runs) > 1 else ""
    return (f"request {i + 1} of {len(log.per_request or [])} accepted nothing for {n} steps in a row (steps "
            f"{first + 1}–{first + n}) where {_pct(zero)} of all steps accept nothing{others}: the repetition-loop "
            "pattern of vLLM #55357, where the output loops and every draft is rejected; read those requests' "
            "output for a loop (a repetition penalty or a stop on repeats ends it)"), None


def first_position(v: ServerView) -> tuple[str | None, str | None]:
    """Position-1 collapse, from the log's own shares or against the pair's hindsight."""
    lg = v.log
    if lg.mean_only or not lg.survival:
        return None, "position-1 collapse (needs per-position shares; a mean has none)"
    shares = (lg.survival + [0.0] * lg.k)[:lg.k]
    first = shares[0]
    later = sum(shares[1:]) / sum(shares[:-1]) if lg.k > 1 and sum(shares[:-1]) > 0 else math.nan
    evidence = lg.steps * first >= MIN_STEPS   # enough accepted first drafts to say what follows them
    own = first < FIRST_LOW and math.isfinite(later) and later >= LATER_HIGH and evidence
    ours = v.ours_survival[0] if v.ours_survival and math.isfinite(v.ours_survival[0]) else math.nan
    hindsight = math.isfinite(ours) and first <= ours - HINDSIGHT_GAP and first <= ours / 2
    if not (own or hindsight):
        return None, None
    said = [f"only {_pct(first)} of steps accept the first draft"]
    if math.isfinite(later) and later >= LATER_HIGH:
        said.append(f"yet {_pct(later)} of the drafts after an accepted one are accepted too")
    if hindsight:
        said.append(f"where the pair's hindsight here accepts {_pct(ours)} ({v.draft}, at K = {lg.k})")
    return (", ".join(said) + ": the first position is starved, the pattern of a draft fed the wrong hidden state "
            "(LightLLM PR #1402) or drafting greedily at temperature > 0 (vLLM's draft_sample_method greedy); check "
            "which target layer feeds the head, and leave draft_sample_method at its default"), None


def k_past_best(v: ServerView) -> tuple[str | None, str | None]:
    """The server's K against the best K′ ≤ K the verdict's own ranking gives, under the same costs."""
    lg, best, at_k = v.log, v.best, v.windows[-1]
    if best.k >= lg.k or v.tie or not (best.speedup > at_k.speedup * K_MARGIN):
        return None, None
    past = "" if lg.mean_only or best.k >= len(lg.survival) else \
        f"the drafts past position {best.k} are accepted in only {_pct(lg.survival[best.k])} of steps, so "
    costs = "the costs you gave" if v.costs_given else "this machine's costs"
    sure = " at least" if lg.mean_only else ""
    return (f"K = {lg.k} is past the best: {past}{knob(lg.engine)} {best.k} is predicted{sure} "
            f"{best.speedup:.2f}× against {at_k.speedup:.2f}× at {lg.k} (under {costs}, batch 1; each drafted "
            "token costs a draft forward and a verify slot whether or not it is accepted: docs/deploy.md)"), None


def _bucket(n: int) -> int:
    return next((i for i, edge in enumerate(BUCKETS) if n < edge), len(BUCKETS))


def _label(i: int) -> str:
    k = [f"{e // 1024}k" for e in BUCKETS]
    return f"<{k[0]}" if i == 0 else (f"≥{k[-1]}" if i == len(BUCKETS) else f"{k[i - 1]}–{k[i]}")


def context_decay(log: ServerLog) -> tuple[str | None, str | None]:
    """Acceptance by prompt-length bucket; a line when the longest bucket accepts far less than the shortest."""
    known = [r for r in log.per_request or [] if r.prompt_tokens is not None and r.steps]
    if not known:
        return None, ("long-context decay (needs each request's prompt length: per-request responses with "
                      "usage.prompt_tokens, or SGLang's meta_info.prompt_tokens)")
    groups: dict[int, list[Request]] = {}
    for r in known:
        groups.setdefault(_bucket(r.prompt_tokens or 0), []).append(r)
    rows = sorted((i, sum(r.accepted for r in rs) / sum(r.steps for r in rs), len(rs))
                  for i, rs in groups.items() if sum(r.steps for r in rs) >= MIN_STEPS)
    if len(rows) < 2:
        held = f"only {_label(rows[0][0])} tokens" if rows else "none"
        return None, f"long-context decay (prompt-length buckets holding {MIN_STEPS}+ steps: {held}; it needs two)"
    (_, short, _), (_, long_, _) = rows[0], rows[-1]
    if not (long_ < short * DECAY and short - long_ >= DECAY_MIN):
        return None, None
    table = " · ".join(f"{_label(i)} tokens: {1 + m:.2f} ({n} req)" for i, m, n in rows)
    return (f"acceptance falls as the prompt grows, mean acceptance length by prompt length {table}: the long-context "
            "decay of vLLM #52258 (a draft trained on short contexts loses the thread); speculate only below the "
            "length where it still pays, or use a draft trained for long contexts"), None


RULES: tuple[tuple[str, Callable[[ServerView], tuple[str | None, str | None]]], ...] = (
    ("episodic zero acceptance", lambda v: zero_runs(v.log)),
    ("position-1 collapse", first_position),
    ("K past the best", k_past_best),
    ("long-context decay", lambda v: context_decay(v.log)),
)


def data_pitfalls(v: ServerView) -> tuple[list[tuple[str, str]], list[str]]:
    """Every pitfall the log shows, as (name, the line the user sees), and those it cannot show, with why."""
    found, unchecked = [], []
    for name, rule in RULES:
        line, why = rule(v)
        if line is not None:
            found.append((name, line))
        elif why is not None:
            unchecked.append(why)
    return found, unchecked


__all__ = ["RULES", "data_pitfalls"]
