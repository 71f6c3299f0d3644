"""Recording a sampled trace: coupled random draws, so every policy's sampled run replays from one trace.

Under sampling the accepted text depends on where windows start — unless the
random draws are tied to output positions rather than to steps. Here every
position i of the output owns its uniforms (u_draft, u_accept, u_residual),
and the token at i is *always* defined by the speculative-sampling rule
(Leviathan et al.), whether a live schedule would have drafted it or made it
the target's bonus token:

    x_i  = the draft's served law q(· | text[:i]) at u_draft (inverse CDF)
    keep = u_accept · q(x_i) < p(x_i)          (accept with min(1, p/q))
    y_i  = x_i if keep else norm(max(0, p − q)) at u_residual

y_i follows the target's served law p(· | text[:i]) exactly (the rule is
lossless), so the continuation y is a sample of the target alone, the same
for every window schedule. A step from position n that drafts d tokens sees
x_n, x_{n+1}, … while they equal y (accepted: the draft's prefix is the
text), and its first rejection is the first position where x_m ≠ y_m (a
rejected x_m has p(x_m) < q(x_m), so the residual never gives x_m back).
That is the greedy trace's structure with `draft_ids` = x and `tokens` = y,
so `simulate.play_trace` and the oracle play it unchanged; what is new is
that a token's top-1 and chosen probabilities differ (`draft_top`).

After a rejection the draft goes on from its own token x_m; those off-path
proposals (needed for early stops and drafted EOS) are drawn from a separate
uniform stream, so they are independent of the later on-path draws, as in a
live run. Exact: for a fixed schedule, the joint law of tokens, acceptances
and every probability a policy reads equals the live decoder's. Not token for
token: the live decoder draws a bonus token straight from p (the trace draws
it by the rule above: the same law) and spends its generator differently, so
a live run with the same seed is another sample of the same law.
"""

from __future__ import annotations

import time
import zlib
from typing import TYPE_CHECKING, Iterable

from ...engine.common.pair import ModelPair
from ...engine.runners.hf_compat import cache_kw
from ...engine.common.sampling import SamplingConfig, Served
from ...engine.common.vocab import shared_vocab
from .model_trace import Trace
from ...engine.plain import prefilled
from ...engine.runners.hybrid_probe import state_runner
from ...engine.runners.recurrent import has_recurrent_state

if TYPE_CHECKING:   # torch and transformers load when a trace is recorded, not when the simulator imports this
    import torch
    from transformers import Cache, PreTrainedModel

OFF_STREAM = 0x5EED  # added to the seed for the off-path stream


def draw(probs: torch.Tensor, u: float) -> int:
    """Inverse CDF: the first token whose cumulative probability exceeds u · total (never a zero-mass token)."""
    import torch

    cum = torch.cumsum(probs.double(), 0)
    i = int(torch.searchsorted(cum, torch.tensor([float(u) * float(cum[-1])], dtype=torch.float64), right=True)[0])
    return min(i, probs.shape[0] - 1)


def residual_law(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p − q)); p itself when p ≤ q everywhere (then a rejection cannot happen)."""
    import torch

    r = torch.clamp(p.double() - q.double(), min=0.0)
    s = float(r.sum())
    return r / s if s > 0 else p.double()


def coupled_token(p: torch.Tensor, q: torch.Tensor, u_draft: float, u_accept: float, u_residual: float) -> tuple[int, int]:
    """(x, y) at one position: the draft's draw and the token the speculative-sampling rule makes of it.

    y follows p whatever q is (the rule is lossless); y == x exactly when x is accepted.
    """
    x = draw(q, u_draft)
    if u_accept * float(q[x]) < float(p[x]):
        return x, x
    return x, draw(residual_law(p, q), u_residual)


def record_sampled_trace(pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, off_depth: int,
                         eos_ids: Iterable[int], sampling: SamplingConfig, header_s: float = 0.0) -> Trace:
    """Runs both models once over a prompt with coupled draws and keeps what every sampled policy will see.

    The target and the draft decode side by side, one cached token at a time;
    `plain_s` is the target's share of that (its prefill, passes and draws):
    target-only sampled decoding. `sampling.seed` fixes every draw.
    """
    import torch

    if sampling.greedy:
        raise ValueError("a sampled trace needs a temperature > 0; greedy traces come from trace_record")
    target, draft = pair.target, pair.draft
    assert draft is not None, "a sampled trace is a draft model's (the other sources trace greedy decoding)"
    device = torch.device(pair.device)
    vocab = shared_vocab(target, draft)
    eos = set(int(i) for i in eos_ids)
    served = Served(sampling)
    # each prompt its own streams: the seed and the prompt's id (stable across runs and machines),
    # kept in torch's 64 bits so a large --seed is a seed like any other (small ones are unchanged)
    seed = (0 if sampling.seed is None else int(sampling.seed)) * 1_000_003 + zlib.crc32(prompt_id.encode("utf-8"))
    gen = torch.Generator().manual_seed(seed % 2**64)
    gen_off = torch.Generator().manual_seed((seed + OFF_STREAM) % 2**64)
    ids = list(prompt_ids)
    P = len(ids)

    def law(model: PreTrainedModel, token: int, cache: Cache) -> torch.Tensor:
        lg = model(input_ids=torch.tensor([[token]], device=device), **cache_kw(model, cache), use_cache=True,
                   logits_to_keep=1).logits[0, -1, :vocab].float()
        return served.probs(lg.unsqueeze(0))[0].cpu()

    toks: list[int] = []
    d_ids: list[int] = []
    d_prob: list[float] = []
    d_top: list[float] = []
    d_ent: list[float] = []
    off_ids: dict[int, list[int]] = {}
    off_prob: dict[int, list[float]] = {}
    off_top: dict[int, list[float]] = {}
    off_ent: dict[int, list[float]] = {}
    with torch.no_grad():
        t0 = time.perf_counter()
        tcache = prefilled(target, ids, device)
        assert tcache is not None, "a transformers cache runner starts with a cache"
        plain_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        # a hybrid draft's recurrent state cannot be cropped after its off-path: its runner rewinds it
        drun = state_runner(draft) if has_recurrent_state(draft) else None
        dcache = prefilled(draft, ids, device) if drun is None else None
        if drun is not None:
            drun.start(P + max_new_tokens + off_depth)
            if P > 1:
                drun.prefill(torch.tensor([ids[:-1]], device=device))

        def dlaw(token: int) -> torch.Tensor:
            if drun is None:
                assert dcache is not None   # one of the two holds the draft's state
                return law(draft, token, dcache)
            lg = drun.forward(torch.tensor([[token]], device=device), 1)[0, :vocab].float()
            return served.probs(lg.unsqueeze(0))[0].cpu()

        session_s = header_s + plain_s + (time.perf_counter() - t1)
        last = ids[-1]
        while len(toks) < max_new_tokens:
            i = len(toks)
            u_d, u_a, u_r = torch.rand(3, generator=gen, dtype=torch.float64).tolist()
            t2 = time.perf_counter()
            p = law(target, last, tcache)
            plain_s += time.perf_counter() - t2
            q = dlaw(last)  # the draft cache now holds prompt + toks[:i]
            x, y = coupled_token(p, q, u_d, u_a, u_r)
            qx = float(q[x])
            toks.append(y)
            d_ids.append(x)
            d_prob.append(qx)
            d_top.append(float(q.max()))
            d_ent.append(float(torch.special.entr(q).sum()))   # H(q) of the served law, in nats
            if x != y and x not in eos:  # off-path: what the draft proposes after its own rejected token
                xs: list[int] = []
                ps: list[float] = []
                tops: list[float] = []
                hs: list[float] = []
                xx = x
                for _ in range(off_depth):
                    qq = dlaw(xx)
                    xx = draw(qq, float(torch.rand(1, generator=gen_off, dtype=torch.float64)))
                    xs.append(xx)
                    ps.append(float(qq[xx]))
                    tops.append(float(qq.max()))
                    hs.append(float(torch.special.entr(qq).sum()))
                    if xx in eos:
                        break
                off_ids[i], off_prob[i], off_top[i], off_ent[i] = xs, ps, tops, hs
                if drun is not None:
                    if drun.length > P + i:
                        drun.rewind(P + i)
                else:
                    assert dcache is not None   # one of the two holds the draft's state
                    cur = dcache.get_seq_length()
                    if cur > P + i:
                        dcache.crop(-(cur - (P + i)))
            elif x != y:  # the rejected token is EOS: drafting stops on it, nothing follows
                off_ids[i], off_prob[i], off_top[i], off_ent[i] = [], [], [], []
            last = y
            if y in eos:
                break
    return Trace(prompt_id=prompt_id, prompt_ids=list(prompt_ids), tokens=toks, draft_ids=d_ids, draft_prob=d_prob,
                 off_ids=off_ids, off_prob=off_prob, off_depth=off_depth, eos_ids=sorted(eos),
                 max_new_tokens=max_new_tokens, session_s=session_s, plain_s=plain_s,
                 draft_top=d_top, off_top=off_top, sampling=sampling.to_json(), draft_entropy=d_ent,
                 off_entropy=off_ent)


__all__ = ["draw", "residual_law", "coupled_token", "record_sampled_trace"]
