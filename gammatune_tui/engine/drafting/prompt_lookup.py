"""Prompt lookup: drafting without a draft model, by copying what followed the text's last words before.

The rule (after prompt lookup decoding, Saxena 2023, as in transformers'
`prompt_lookup_num_tokens` and vLLM's n-gram proposer). Each step, take the
last n tokens of the accepted text (prompt + generated so far), for n from
`ngram_max` down to `ngram_min`; at the first n whose n-gram occurred before,
take its **most recent** earlier occurrence and propose the tokens that
followed it, up to the window. The copy may run on into the tokens it has just
proposed (after "a b a b" the match "a b" at the start is followed by "a b",
then by the copy's own "a b" …), so a repeating pattern fills any window. No
match: nothing is proposed and the step is a plain target step. Nothing is
loaded, nothing is cached but the index below, and the proposal is a
deterministic function of the accepted text, so under greedy decoding the
trace simulator replays it exactly.

Stand-in probabilities (what the γ policies read instead of a draft model's
top-1 and chosen probability): the index counts, for every n-gram, which
tokens followed it in the accepted text. For a proposed token x whose context
(the n tokens before it, n the matched length) was followed N times by T
different tokens, c(x) of them x:

    chosen_prob = c(x) / (N + T)      top_prob = max_y c(y) / (N + T)

the Witten–Bell estimate of P(x | context): the share of the earlier
occurrences that went on with x, with mass T/(N+T) held back for a
continuation not seen yet. A context seen once gives 0.5, seen twice with the
same follower 0.67, seen twice with two followers 0.25 (a copy that runs on
into its own proposal repeats the accepted text, so its contexts and
followers were counted there too). So gammatune+'s and
assistant-threshold's τ stop a window where the text so far is ambiguous
about what comes next. These numbers steer the policy only: the accept test
uses the true proposal law, a point mass (drafting.Draft.point_mass).

The index is kept incrementally: each accepted token adds one entry per n,
so a step costs O(new tokens × n sizes + window), whatever the context
length (docs/benchmarks.md, "Prompt lookup", measures it).
"""

from __future__ import annotations

import torch

from . import Draft, DraftSource
from ..policies.policy_base import Policy, TokenStats
from ..policies.step_rule import cut_window
from ..common.sampling import Served

Entry = list  # [end index of the latest occurrence, N followers, top count, {follower: count}]


class NgramIndex:
    """Every n-gram (n_min ≤ n ≤ n_max) of a growing token list: where it last occurred, and what followed it.

    Only occurrences with a follower are indexed, so the text's own last
    n-gram (which has none yet) never matches itself.
    """

    __slots__ = ("n_min", "n_max", "entries", "size")

    def __init__(self, n_min: int, n_max: int):
        self.n_min, self.n_max = n_min, n_max
        self.entries: dict[tuple[int, ...], Entry] = {}
        self.size = 0  # tokens indexed: every n-gram ending before size - 1 is in `entries`

    def extend(self, ids: list[int]) -> None:
        """Index the tokens of `ids` past `size` (`ids` only ever grows by appending)."""
        entries, lo, hi = self.entries, self.n_min, self.n_max
        for i in range(max(self.size, 1), len(ids)):
            t = ids[i]
            for n in range(lo, min(hi, i) + 1):
                key = tuple(ids[i - n:i])
                e = entries.get(key)
                if e is None:
                    entries[key] = [i - 1, 1, 1, {t: 1}]
                else:
                    e[0] = i - 1
                    e[1] += 1
                    follow = e[3]
                    c = follow.get(t, 0) + 1
                    follow[t] = c
                    if c > e[2]:
                        e[2] = c
        self.size = max(self.size, len(ids))

    def match(self, ids: list[int]) -> tuple[int, int]:
        """(n, end of the latest earlier occurrence of the last n tokens) for the longest n; (0, -1) if none."""
        L = len(ids)
        entries = self.entries
        for n in range(min(self.n_max, L), self.n_min - 1, -1):
            e = entries.get(tuple(ids[L - n:]))
            if e is not None:
                return n, e[0]
        return 0, -1

    def propose(self, ids: list[int], window: int) -> tuple[list[int], list[float], list[float]]:
        """Up to `window` tokens copied after the match, with each one's (top, chosen) stand-in probabilities."""
        n, j = self.match(ids)
        if n == 0 or window <= 0:
            return [], [], []
        L = len(ids)
        entries = self.entries
        out: list[int] = []
        tops: list[float] = []
        chosen: list[float] = []
        ctx = tuple(ids[L - n:])
        for k in range(window):
            s = j + 1 + k
            x = ids[s] if s < L else out[s - L]  # the copy runs on into its own proposal
            e = entries.get(ctx)
            if e is None:
                tops.append(0.0)
                chosen.append(0.0)
            else:
                denom = e[1] + len(e[3])
                tops.append(e[2] / denom)
                chosen.append(e[3].get(x, 0) / denom)
            out.append(x)
            ctx = ctx[1:] + (x,)
        return out, tops, chosen


def point_mass_stats(tops: list[float], chosen: list[float]) -> list[TokenStats]:
    """A proposal's statistics as the policies read them: the stand-in probabilities, entropy 0 (a point mass)."""
    return [TokenStats(t, c, 0.0) for t, c in zip(tops, chosen)]


def point_mass_draft(xs: list[int], tops: list[float], chosen: list[float], window: int, policy: Policy,
                     eos: frozenset[int]) -> Draft:
    """A deterministic proposal as the decoder's `Draft` (q = δ_x), cut by the window, a drafted EOS and the
    policy's early stop as every source's window is (`cut_window`)."""
    out = Draft(point_mass=True)
    if window <= 0:
        return out
    stats = point_mass_stats(tops, chosen)
    n, early = cut_window(xs, stats, window, policy, eos)
    out.ids, out.top, out.chosen, out.entropy, out.early = xs[:n], tops[:n], chosen[:n], [0.0] * n, early
    return out


class PointMassSource(DraftSource):
    """A source that proposes deterministically from the text (no model, no runner): its `propose` gives the
    window's tokens and stand-in probabilities, and every such source drafts them the same way."""

    runner = None

    def propose(self, ids: list[int], window: int) -> tuple[list[int], list[float], list[float]]:
        raise NotImplementedError

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        if window <= 0:
            return Draft(point_mass=True)
        return point_mass_draft(*self.propose(ids, window), window, policy, eos)


class PromptLookupSource(PointMassSource):
    """The `prompt-lookup` draft source: an `NgramIndex` over the session's accepted text."""

    def __init__(self, ngram_min: int, ngram_max: int):
        self.ngram_min, self.ngram_max = ngram_min, ngram_max
        self.index = NgramIndex(ngram_min, ngram_max)

    def start(self, prompt_ids: list[int]) -> None:
        self.index = NgramIndex(self.ngram_min, self.ngram_max)
        self.index.extend(prompt_ids)

    def propose(self, ids: list[int], window: int) -> tuple[list[int], list[float], list[float]]:
        """The raw proposal for the accepted text `ids` (no policy, no EOS cut): what the simulator records."""
        self.index.extend(ids)
        return self.index.propose(ids, window)


__all__ = ["NgramIndex", "PointMassSource", "PromptLookupSource", "point_mass_draft"]
