"""The trace simulator for prompt lookup: what every greedy policy will see, recorded once per prompt.

Under greedy decoding the accepted text is a prefix of the target's own greedy
continuation, and prompt lookup's proposal is a deterministic function of the
accepted text (engine/drafting/prompt_lookup.py). So a trace holds the continuation and,
at every position n, the source's raw proposal for prompt + continuation[:n]
(up to the longest window a policy that reads the stand-in probabilities can
plan, with them) and where it copies from; a step from position n drafts a
prefix of that list, cut by the window, a drafted EOS and the policy's early
stop exactly as the live source cuts it (the same `cut_window`). A window
longer than the recorded depth (hf-heuristic's grows without bound) is
continued by the same copy, for a policy that never reads the stand-ins. Replays are therefore exact, as for a draft model's trace
(`simulate.Trace`); `TRACE_KIND` is this kind for the simulator (trace_kinds.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ...engine.common.names import BY_SOURCE
from ...engine.common.pair import ModelPair
from ...engine.events import SessionHeader, StepEvent
from ...engine.policies import Policy
from ...engine.policies.policy_base import TokenStats
from ...engine.drafting.prompt_lookup import PromptLookupSource, point_mass_stats
from ...engine.policies.step_rule import cut_window, window_end
from .cost_model import CostModel
from ..results import RunRecord
from .session_play import SimStep, play_windows
from .model_trace import ProposalTrace, TraceTooShallow
from .trace_record import forced_checks, target_run

KIND = "prompt-lookup"


@dataclass
class LookupTrace(ProposalTrace):
    """One prompt as prompt lookup and the target decode it greedily."""

    prompt_id: str
    prompt_ids: list[int]
    tokens: list[int]  # the target's greedy continuation (ends with EOS when it stopped there)
    proposals: list[list[int]]  # position n → the source's proposal after prompt + tokens[:n] ([] = no match)
    tops: list[list[float]]  # their stand-in top-1 probabilities
    chosen: list[list[float]]  # and chosen probabilities
    depth: int  # the longest proposal recorded (a match fills it; the copy runs on into itself)
    sources: list[int]  # position n → where the matched n-gram last ended (the copy starts after it); -1: none
    ngram_min: int
    ngram_max: int
    eos_ids: list[int]
    max_new_tokens: int
    session_s: float = 0.0  # per-session cost outside the steps (header, the target's prefill)
    plain_s: float = 0.0  # target-only decoding of the continuation, prefill included
    target_flips: list[int] = field(default_factory=list)
    fragile: int = 0
    kind: str = KIND

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "LookupTrace":
        return cls(**d)


def window_outcome(trace: LookupTrace, n: int, window: int,
                   policy: Policy) -> tuple[int, int, bool, list[TokenStats]]:
    """(drafted, accepted, early stop, the drafted tokens' statistics) of a step from position n with this
    window, as the live source drafts it (entropy 0: a point mass)."""
    props, tops, chosen = trace.proposals[n], trace.tops[n], trace.chosen[n]
    if window > len(props) and props:
        if policy.may_stop_early:
            raise TraceTooShallow(f"window {window} needs {window} proposals with their probabilities; "
                                  f"the trace holds {trace.depth}")
        props = _copied(trace, n, window)
        # past the recorded depth the stand-ins are not known; never asked (this policy does not stop early)
        tops = chosen = [0.0] * window
    stats = point_mass_stats(tops, chosen)
    d, early = cut_window(props, stats, window, policy, frozenset(trace.eos_ids))
    toks, L = trace.tokens, len(trace.tokens)
    a = 0
    while a < d and n + a < L and props[a] == toks[n + a]:
        a += 1
    return d, a, early, stats[:d]


def _copied(trace: LookupTrace, n: int, window: int) -> list[int]:
    """The proposal from position n continued to `window` tokens: the same copy, running on into itself."""
    seq = list(trace.prompt_ids) + trace.tokens[:n]
    L, src = len(seq), trace.sources[n]
    out: list[int] = []
    for k in range(window):
        s = src + 1 + k
        out.append(seq[s] if s < L else out[s - L])
    return out


def play_lookup(trace: LookupTrace, policy: Policy, max_new_tokens: int | None = None, cost: CostModel | None = None,
                steps_out: list[SimStep] | None = None,
                timings: Sequence[tuple[float, float]] | None = None) -> RunRecord:
    """One session of `policy` over a prompt-lookup trace, with the decoder's rules; timed by `cost`.

    As the decoder (engine/policies/step_rule.py): window = min(γ, remaining − 1); a
    step whose source found nothing to propose is a plain target step and
    leaves the policy (and its cost observations) alone.
    """
    return play_windows(trace, policy, lambda n, w, p: window_outcome(trace, n, w, p), max_new_tokens, cost,
                        steps_out, timings, counts_calls=False)


def record_lookup_trace(pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, depth: int,
                        eos_ids: Iterable[int], ngram_min: int, ngram_max: int, header_s: float = 0.0) -> LookupTrace:
    """Decodes the prompt with the target alone once, then asks prompt lookup for a proposal at every position."""
    import torch

    target = pair.target
    device = torch.device(pair.device)
    vocab = int(target.config.vocab_size)
    eos = set(int(i) for i in eos_ids)
    ids = list(prompt_ids)
    P = len(ids)
    toks, t_prefill, plain_s = target_run(pair, ids, max_new_tokens, eos, vocab=vocab)
    with torch.no_grad():
        # a teacher-forced pass: where one pass over the text disagrees with cached decoding (float near-ties)
        n = len(toks)
        tl = target(input_ids=torch.tensor([ids + toks], device=device), use_cache=False).logits[0, P - 1:P - 1 + n, :vocab]
        flips, fragile = forced_checks(tl, toks)
    bare = LookupTrace(prompt_id=prompt_id, prompt_ids=list(prompt_ids), tokens=toks, proposals=[], tops=[],
                       chosen=[], depth=depth, sources=[], ngram_min=ngram_min, ngram_max=ngram_max, eos_ids=sorted(eos),
                       max_new_tokens=max_new_tokens, session_s=header_s + t_prefill, plain_s=plain_s,
                       target_flips=flips, fragile=fragile)
    return repropose(bare, ngram_min, ngram_max)


def repropose(trace: LookupTrace, ngram_min: int, ngram_max: int, depth: int | None = None) -> LookupTrace:
    """The same continuation with the proposals of other n-gram sizes (the target is not run again)."""
    import dataclasses

    depth = trace.depth if depth is None else depth
    source = PromptLookupSource(ngram_min, ngram_max)
    source.start(trace.prompt_ids)
    seq = list(trace.prompt_ids)
    proposals, tops, chosen, sources = [], [], [], []
    for t in trace.tokens:
        xs, tp, ch = source.propose(seq, depth)
        proposals.append(xs)
        tops.append(tp)
        chosen.append(ch)
        sources.append(source.index.match(seq)[1])
        seq.append(t)
    return dataclasses.replace(trace, proposals=proposals, tops=tops, chosen=chosen, depth=depth, sources=sources,
                               ngram_min=ngram_min, ngram_max=ngram_max)


def window_options(trace: LookupTrace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
    """(window, drafted, accepted, emitted) for every window 0 … wmax from position n (the oracle's choices).

    Drafting stops only at the window and a drafted EOS here (the oracle never
    stops early); where nothing is proposed only the plain step (window 0) exists.
    """
    toks, L = trace.tokens, len(trace.tokens)
    out = [(0, 0, 0, 1)]
    props = trace.proposals[n]
    if not props or wmax <= 0:
        return out
    full = props[:wmax] if wmax <= len(props) else _copied(trace, n, wmax)
    eos = set(trace.eos_ids)
    e = next((i for i, x in enumerate(full) if x in eos), None)
    run = 0
    while run < len(full) and n + run < L and full[run] == toks[n + run]:
        run += 1
    for w in range(1, wmax + 1):
        d = window_end(w, e)
        a = min(run, d)
        out.append((w, d, a, min(a + 1, L - n)))
    return out


def session_lookup_trace(pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> LookupTrace:
    """The trace of a finished prompt-lookup session: its tokens, and prompt lookup's proposal at every position.

    Prompt lookup's proposal is a function of the text alone, so no model runs:
    the proposals are recomputed over the session's own text with its n-gram sizes.
    """
    tokens = [e.id for s in steps for e in s.emitted]
    params = {p.name: p.default for p in BY_SOURCE[KIND].params} | dict(header.drafter_params or {})
    lo, hi = int(params["ngram_min"]), int(params["ngram_max"])
    depth = max([len(s.drafted) for s in steps] + [1])
    bare = LookupTrace(prompt_id=f"turn {header.turn + 1}", prompt_ids=list(header.prompt_ids), tokens=tokens,
                       proposals=[], tops=[], chosen=[], depth=depth, sources=[], ngram_min=lo, ngram_max=hi,
                       eos_ids=sorted(int(i) for i in pair.eos_ids), max_new_tokens=len(tokens))
    return repropose(bare, lo, hi)


class LookupKind:
    """Prompt lookup's trace kind (bench/sim/trace_kinds.py): `LookupTrace`, played by `play_lookup`."""

    name = KIND

    def record(self, pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, max_window: int,
               eos_ids: Iterable[int], params: dict[str, Any], header_s: float) -> LookupTrace:
        return record_lookup_trace(pair, prompt_id, prompt_ids, max_new_tokens, max_window, eos_ids,
                                   params["ngram_min"], params["ngram_max"], header_s)

    def from_json(self, d: dict[str, Any]) -> LookupTrace:
        return LookupTrace.from_json(d)

    def play(self, trace: LookupTrace, policy: Policy, max_new_tokens: int | None, cost: CostModel | None,
             steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None) -> RunRecord:
        return play_lookup(trace, policy, max_new_tokens, cost, steps_out, timings)

    def step_options(self, trace: LookupTrace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
        return window_options(trace, n, wmax)

    def from_session(self, pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> LookupTrace:
        return session_lookup_trace(pair, header, steps)


TRACE_KIND = LookupKind()

__all__ = ["LookupTrace", "TRACE_KIND", "play_lookup", "record_lookup_trace", "repropose", "session_lookup_trace",
           "window_options", "window_outcome"]
