"""llama.cpp's draft rule (`--spec-draft-n-max / -n-min / -p-min`) played over a greedy trace.

It differs from gammatune's `p-min` policy in two places, so it is played
here rather than as a policy of the shared step rule
(common/speculative.cpp, `common_speculative_impl_draft_simple::draft`, at
llama.cpp commit 001d906; docs/deploy.md):

* a drafted token whose top probability is below p-min is *dropped*, not
  kept as the last of the window (the house keeps it: the HF convention);
  its draft forward was paid all the same;
* a draft shorter than n-min is thrown away whole (`result->clear()`): the
  step is a plain target step, and the draft forwards are lost time.

The window is also capped at n-max and by the token budget, as the house's
is. llama.cpp reads the top probability from its draft sampler's top-k
candidates, renormalised over those k; a trace holds the full softmax's
top-1 probability, which is never higher, so at a given p-min this play
stops no later than llama.cpp would (said in docs/deploy.md).
"""

from __future__ import annotations

from typing import Sequence

from ...engine.policies import PolicySettings
from ...engine.policies.step_rule import plan_window
from ..results import RunRecord
from ..sim.cost_model import CostModel
from ..sim.session_play import SessionPlay
from ..sim.sim_trace import ChainTrace
from ..sim.simulate import Trace, TraceTooShallow

NAME = "llama.cpp"


def _token(trace: Trace | ChainTrace, n: int, k: int, miss: int) -> tuple[int, float] | None:
    """The k-th drafted token of a window starting at position n (k from 0), and its top probability; `miss` is the
    window's first disagreeing position (−1: none yet): after it the draft follows its own off-path proposals.
    A trace that holds a whole chain per position (a head's, prompt lookup's) gives the chain's k-th token, or None
    where the source proposed nothing from n."""
    if not isinstance(trace, Trace):
        chain = trace.proposals[n]
        if not chain:
            return None
        if k >= len(chain):
            raise TraceTooShallow(f"a window of {k + 1} needs a chain of {k + 1}; the trace holds {trace.depth}")
        return chain[k], trace.tops[n][k]
    if miss < 0:
        top = trace.draft_top if trace.draft_top is not None else trace.draft_prob
        return trace.draft_ids[n + k], top[n + k]
    j = n + k - miss - 1
    off = trace.off_ids[miss]
    if j >= len(off):
        raise TraceTooShallow(f"a window of {k + 1} needs {j + 1} draft proposals after a disagreement; "
                              f"the trace holds {trace.off_depth}")
    tops = trace.off_top if trace.off_top is not None else trace.off_prob
    return off[j], tops[miss][j]


def play(trace: Trace | ChainTrace, n_max: int, n_min: int, p_min: float,
         max_new_tokens: int | None = None,
         cost: CostModel | None = None) -> RunRecord:
    """One session under llama.cpp's rule; priced by `cost`, every draft forward counted (kept or not)."""
    policy = PolicySettings.build("specdecode", n_max).make()   # a fixed window that learns nothing
    session = SessionPlay(trace, policy, max_new_tokens, cost, None, None)
    toks, eos = trace.tokens, session.eos
    lost = 0   # draft forwards whose tokens were never verified
    while True:
        n = session.n
        window = plan_window(n_max, session.max_new - n)
        d = a = forwards = 0
        miss = -1
        while d < window:
            got = _token(trace, n, d, miss)
            if got is None:
                break
            x, top = got
            forwards += 1
            if top < p_min:
                break
            d += 1
            if miss < 0 and x == toks[n + d - 1]:
                a += 1
            elif miss < 0:
                miss = n + d - 1
            if x in eos or n + d >= len(toks) and miss < 0:
                break
        if d < n_min:
            d = a = 0
        lost += forwards - d
        if session.settle(n_max, window, d, a, (), False, draft_calls=forwards):
            break
    rec = session.record()
    rec.method, rec.gamma0 = NAME, n_max
    if cost is not None and lost:
        extra = lost * cost.draft_token_s
        rec.draft_s += extra
        rec.wall_s += extra
    return rec


def run(traces: Sequence[Trace | ChainTrace], n_max: int, n_min: int, p_min: float, max_new: int,
        cost: CostModel) -> list[RunRecord]:
    return [play(t, n_max, n_min, p_min, max_new, cost) for t in traces]


__all__ = ["NAME", "play", "run"]
