"""The trace simulator for a head that reads the target (MTP, EAGLE-3): its whole chain from every position.

Under greedy decoding the accepted text is a prefix of the target's own
greedy continuation, and a head's window from position n is a deterministic
function of that text: its cache holds the target's rows of the accepted
positions (the source rebuilds it from them after every verify; see
engine/drafting/mtp.py), and the chain then runs on the head's own output.
That is why a draft model's trace does not fit: there, the second token of a
window that kept its first is the teacher-forced argmax at n + 1, whereas a
head's second token reads the head's own hidden output, not the target's row
at n + 1. So this trace keeps the whole chain from every position, `depth`
deep, with each token's statistics (top, chosen, entropy: what a policy
reads), drafted by the session's own source class fed the rows of one
teacher-forced target pass (runners/hidden.py's `Tapper`, the hooks the
runners use). A replay cuts the chain by the window, a drafted EOS and the
policy's early stop exactly as the live window is cut (`cut_window`).

A row's rounding may differ between that one pass and the live verify
passes, as for every kind: `target_flips` and `fragile` count where it could
matter, and `bench --simulate`'s live check compares step by step.
Sampled traces are not kept: a sampled chain depends on the draws of each
window, so `bench --simulate -t 0.7` with a head is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ...engine.common.pair import ModelPair
from ...engine.drafting import SourceContext
from ...engine.drafting.draft_sources import DrafterSettings, make_source
from ...engine.events import SessionHeader, StepEvent
from ...engine.policies import Policy, PolicyParams
from ...engine.policies.policy_base import TokenStats
from ...engine.policies.step_rule import cut_window, window_end
from ..results import RunRecord
from .cost_model import CostModel
from .model_trace import ProposalTrace, TraceTooShallow
from .session_play import SimStep, play_windows
from .trace_record import forced_checks, target_run


@dataclass
class HeadTrace(ProposalTrace):
    """One prompt as a head and the target decode it greedily."""

    kind: str   # the source's name (mtp, eagle3)
    params: dict[str, Any]   # the source's parameters (the head's feed, its folder)
    prompt_id: str
    prompt_ids: list[int]
    tokens: list[int]   # the target's greedy continuation (ends with EOS when it stopped there)
    proposals: list[list[int]]   # position n → the head's chain after prompt + tokens[:n] ([]: no row yet)
    tops: list[list[float]]   # each chained token's top-1 probability,
    chosen: list[list[float]]   # its own probability,
    entropy: list[list[float]]   # and the entropy of the law it came from (nats)
    depth: int   # the longest chain recorded
    eos_ids: list[int]
    max_new_tokens: int
    session_s: float = 0.0   # per-session cost outside the steps (header, the target's prefill)
    plain_s: float = 0.0   # target-only decoding of the continuation, prefill included
    target_flips: list[int] = field(default_factory=list)
    fragile: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "HeadTrace":
        return cls(**d)


def _chain(trace: HeadTrace, n: int, window: int) -> tuple[list[int], list[TokenStats]]:
    props = trace.proposals[n]
    if window > len(props) and props:
        raise TraceTooShallow(f"window {window} needs a chain of {window}; the trace holds {trace.depth}")
    return props, [TokenStats(*t) for t in zip(trace.tops[n], trace.chosen[n], trace.entropy[n])]


def window_outcome(trace: HeadTrace, n: int, window: int,
                   policy: Policy) -> tuple[int, int, bool, list[TokenStats]]:
    """(drafted, accepted, early stop, the drafted tokens' statistics) of a step from position n."""
    props, stats = _chain(trace, n, window)
    d, early = cut_window(props, stats, window, policy, frozenset(trace.eos_ids))
    toks, L = trace.tokens, len(trace.tokens)
    a = 0
    while a < d and n + a < L and props[a] == toks[n + a]:
        a += 1
    return d, a, early, stats[:d]


def play_head(trace: HeadTrace, policy: Policy, max_new_tokens: int | None = None, cost: CostModel | None = None,
              steps_out: list[SimStep] | None = None,
              timings: Sequence[tuple[float, float]] | None = None) -> RunRecord:
    """One session of `policy` over a head's trace, with the decoder's rules; timed by `cost`. Each chained
    token is one call of the head (the decoder's count); a position with no row yet is a plain step."""
    return play_windows(trace, policy, lambda n, w, p: window_outcome(trace, n, w, p), max_new_tokens, cost,
                        steps_out, timings, counts_calls=True)


def window_options(trace: HeadTrace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
    """(window, drafted, accepted, emitted) for every window 0 … wmax from position n (the oracle's choices;
    it never stops early, so only the window and a drafted EOS end a chain). Windows longer than the recorded
    chain are left out, as a draft model's trace leaves them out (no policy can replay them either)."""
    toks, L = trace.tokens, len(trace.tokens)
    out = [(0, 0, 0, 1)]
    props = trace.proposals[n]
    wmax = min(wmax, len(props))
    if wmax <= 0:
        return out
    eos = set(trace.eos_ids)
    e = next((i for i, x in enumerate(props[:wmax]) if x in eos), None)
    run = 0
    while run < wmax and n + run < L and props[run] == toks[n + run]:
        run += 1
    for w in range(1, wmax + 1):
        d = window_end(w, e)
        a = min(run, d)
        out.append((w, d, a, min(a + 1, L - n)))
    return out


def record_head_trace(pair: ModelPair, name: str, params: dict[str, Any], prompt_id: str, prompt_ids: list[int],
                      max_new_tokens: int, depth: int, eos_ids: Iterable[int], header_s: float = 0.0,
                      tokens: list[int] | None = None) -> HeadTrace:
    """Decodes the prompt with the target alone (unless `tokens` are given), then has the head draft a chain
    `depth` deep from every position, fed as the decoder feeds it: the prefill's rows (positions 0 … P − 2),
    then one row per accepted token."""
    import torch

    from ...engine.common.sampling import Served
    from ...engine.common.sampling_config import SamplingConfig
    from transformers import DynamicCache

    from ...engine.runners.hf_compat import cache_kw
    from ...engine.runners.hidden import Tapper, TargetRows

    target = pair.target
    device = torch.device(pair.device)
    vocab = int(target.config.vocab_size)
    eos = set(int(i) for i in eos_ids)
    ids = list(prompt_ids)
    P = len(ids)
    if tokens is None:
        toks, t_prefill, plain_s = target_run(pair, ids, max_new_tokens, eos, vocab=vocab)
    else:
        toks, t_prefill, plain_s = list(tokens), 0.0, 0.0
    source = make_source(DrafterSettings(name, **params), SourceContext(pair, None, None, None))
    reads = source.reads
    assert reads is not None, f"{name} reads the target"
    tapper = Tapper(target, reads)
    L = len(toks)
    # the recording's chain is cut only by its window (and drafts past an EOS): replays cut it by each policy
    served, gen, never = Served(SamplingConfig()), torch.Generator(device=device), Policy(1, PolicyParams())
    proposals, tops, chosen, entropy = [], [], [], []
    # a source that reads keys and values (the Gemma 4 assistant) gets the pass's cache, cut to each position
    cache = DynamicCache() if reads.kv else None
    with torch.no_grad():
        with tapper.pass_of(P + L):   # one teacher-forced pass: every row the live passes hand over
            tl = target(input_ids=torch.tensor([ids + toks], device=device), use_cache=cache is not None,
                        **cache_kw(target, cache)).logits[0, P - 1:P - 1 + L, :vocab]
        rows = tapper.rows
        assert rows is not None
        flips, fragile = forced_checks(tl, toks)

        def kv(end: int) -> tuple[tuple[Any, Any], ...]:
            layers: Any = cache.layers if cache is not None else []
            return tuple((layers[i].keys[:, :, :end], layers[i].values[:, :, :end]) for i in reads.kv)

        if P > 1:
            source.observe(TargetRows(0, rows[:P - 1], kv(P - 1)))
        for n in range(L):
            if n:
                source.observe(TargetRows(P + n - 2, rows[P + n - 2:P + n - 1], kv(P + n - 1)))
            d = source.draft(ids + toks[:n], depth, policy=never, served=served, gen=gen, eos=frozenset(),
                             device=device)
            proposals.append(d.ids)
            tops.append(d.top)
            chosen.append(d.chosen)
            entropy.append(d.entropy)
    return HeadTrace(kind=name, params=dict(params), prompt_id=prompt_id, prompt_ids=ids, tokens=toks,
                     proposals=proposals, tops=tops, chosen=chosen, entropy=entropy, depth=depth, eos_ids=sorted(eos),
                     max_new_tokens=max_new_tokens, session_s=header_s + t_prefill, plain_s=plain_s,
                     target_flips=flips, fragile=fragile)


class HeadKind:
    """A head's trace kind (bench/sim/trace_kinds.py): `HeadTrace`, played by `play_head`. One per head source,
    by the source's name."""

    def __init__(self, name: str):
        self.name = name

    def record(self, pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, max_window: int,
               eos_ids: Iterable[int], params: dict[str, Any], header_s: float) -> HeadTrace:
        return record_head_trace(pair, self.name, params, prompt_id, prompt_ids, max_new_tokens, max_window,
                                 eos_ids, header_s)

    def from_json(self, d: dict[str, Any]) -> HeadTrace:
        return HeadTrace.from_json(d)

    def play(self, trace: HeadTrace, policy: Policy, max_new_tokens: int | None, cost: CostModel | None,
             steps_out: list[SimStep] | None, timings: Sequence[tuple[float, float]] | None) -> RunRecord:
        return play_head(trace, policy, max_new_tokens, cost, steps_out, timings)

    def step_options(self, trace: HeadTrace, n: int, wmax: int) -> list[tuple[int, int, int, int]]:
        return window_options(trace, n, wmax)

    def from_session(self, pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> HeadTrace:
        """A finished session's trace over its own text: the head's chains recomputed from the target's rows."""
        tokens = [e.id for s in steps for e in s.emitted]
        depth = max([len(s.drafted) for s in steps] + [1])
        return record_head_trace(pair, self.name, dict(header.drafter_params or {}), f"turn {header.turn + 1}",
                                 list(header.prompt_ids), len(tokens), depth, pair.eos_ids, tokens=tokens)


__all__ = ["HeadKind", "HeadTrace", "play_head", "record_head_trace", "window_options", "window_outcome"]
