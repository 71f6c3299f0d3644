"""Recording a greedy trace from a model pair: the target's continuation, the draft along it, and its detours.

What `play_trace` (simulate.py) needs to replay any policy exactly is fixed by
the models alone: the target's greedy continuation (decoded by `plain_decode`
on the paper's transformers-cache path, which also times the plain
baseline), one teacher-forced draft pass over prompt + continuation, and what
the draft goes on proposing after each of its own wrong tokens. Recording is
the slow part of `bench --simulate` (hence the trace cache) and needs torch;
the replay is pure Python. `session_trace` records the same from a finished
session's own steps (the chat's hindsight, hindsight.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Iterable, Sequence

from ...engine.common.pair import ModelPair
from ...engine.common.vocab import shared_vocab
from ...engine.events import SessionHeader, StepEvent
from .model_trace import Trace
from .trace_stats import NAN
from ...engine.runners.hf_compat import cache_kw
from ...engine.runners.hybrid_probe import state_runner
from ...engine.runners.recurrent import has_recurrent_state

if TYPE_CHECKING:   # torch loads when a trace is recorded, not when the simulator imports this
    import torch

FRAGILE_GAP = 1e-4  # logits closer than this can swap order between two float32 evaluation paths


def _margin_small(logits: torch.Tensor) -> torch.Tensor:
    import torch

    top2 = torch.topk(logits.float(), 2, dim=-1).values
    return (top2[..., 0] - top2[..., 1]) < FRAGILE_GAP


def forced_checks(logits: torch.Tensor, toks: Sequence[int]) -> tuple[list[int], int]:
    """(positions where one teacher-forced target pass over the text disagrees with cached decoding, near-tie
    positions) from that pass's logits at the continuation's positions: where a live run may diverge from a trace."""
    flips = [i for i, t in enumerate(logits.float().argmax(-1).tolist()) if t != toks[i]]
    return flips, int(_margin_small(logits).sum())


def target_run(pair: ModelPair, prompt_ids: list[int], max_new_tokens: int, eos_ids: Iterable[int],
               token_s: list[float] | None = None, vocab: int | None = None) -> tuple[list[int], float, float]:
    """Target-only greedy decoding on the paper's path (`plain_decode` over transformers' cache):
    (tokens, prefill seconds, total seconds).

    The plain baseline every simulated table divides by; it depends on the
    target alone, so several drafts' traces of one prompt can share it.
    `vocab`: the ids it chooses among (default: those both models speak, as
    the decoder does; prompt lookup's traces pass the target's own, as the
    decoder does for a model-free source). `token_s`, if given, gets each
    token's seconds.
    """
    from ...engine.plain import plain_decode

    run = plain_decode(pair, prompt_ids, max_new_tokens, transformers_cache=True, vocab=vocab, eos_ids=eos_ids)
    if token_s is not None:
        token_s.extend(run.token_s)
    return run.token_ids, run.prefill_s, run.wall_s


def record_trace(pair: ModelPair, prompt_id: str, prompt_ids: list[int], max_new_tokens: int, off_depth: int,
                 eos_ids: Iterable[int], header_s: float = 0.0,
                 plain: tuple[list[int], float, float] | None = None) -> Trace:
    """Runs the models once over a prompt and keeps what every greedy policy will see.

    `off_depth` should be the longest window any `play_trace` will use, minus
    one. `plain`: this prompt's `target_run`, when it is already known.
    """
    import torch
    from transformers import DynamicCache

    target, draft = pair.target, pair.draft
    assert draft is not None, "a trace is recorded for a pair with a draft model"
    device = torch.device(pair.device)
    vocab = shared_vocab(target, draft)
    eos = set(int(i) for i in eos_ids)
    ids = list(prompt_ids)
    P = len(ids)
    # 1. target-only greedy decoding (timed: the plain baseline)
    toks, t_prefill, plain_s = plain if plain is not None else target_run(pair, ids, max_new_tokens, eos)
    with torch.no_grad():
        full = torch.tensor([ids + toks], device=device)
        n = len(toks)
        # 2. teacher-forced target: where does the one-pass argmax disagree with the cached path?
        tl = target(input_ids=full, use_cache=False).logits[0, P - 1:P - 1 + n, :vocab].float()
        t_arg = tl.argmax(-1).tolist()
        flips = [i for i in range(n) if t_arg[i] != toks[i]]
        fragile_t = _margin_small(tl)
        del tl

        # 3. teacher-forced draft, keeping its cache for the off-path continuations; a hybrid draft's
        #    recurrent state cannot be cropped, so its runner rewinds it (runners/recurrent.py)
        t1 = time.perf_counter()
        run = state_runner(draft) if has_recurrent_state(draft) else None
        dcache = DynamicCache()
        if run is not None:
            run.start(P + n + off_depth)
            if P > 1:
                run.prefill(full[:, :P - 1])
        elif P > 1:
            draft(input_ids=full[:, :P - 1], **cache_kw(draft, dcache), use_cache=True, logits_to_keep=1)
        d_prefill = time.perf_counter() - t1
        if run is not None:
            dl = run.forward(full[:, P - 1:], n + 1)[:n, :vocab].float()
        else:
            dl = draft(input_ids=full[:, P - 1:], **cache_kw(draft, dcache), use_cache=True).logits[0, :n, :vocab].float()
        dp = torch.softmax(dl, -1)
        top, arg = dp.max(-1)
        d_ids = arg.tolist()
        d_prob = top.tolist()
        d_ent = torch.special.entr(dp).sum(-1).tolist()   # H(q) in nats, q the raw softmax (greedy)
        fragile = int((fragile_t | _margin_small(dl)).sum())
        del dl, dp

        # 4. off-path: after the draft's own wrong token at j, what it proposes next (descending j,
        #    so the one cache is only ever cropped back)
        off_ids: dict[int, list[int]] = {}
        off_prob: dict[int, list[float]] = {}
        off_ent: dict[int, list[float]] = {}
        misses = [j for j in range(n) if d_ids[j] != toks[j] and d_ids[j] not in eos]
        for j in reversed(misses):
            cur = run.length if run is not None else dcache.get_seq_length()
            keep = P + j  # cache holds prompt + toks[:j]; the next input is the draft's token at j
            if cur > keep and run is not None:
                run.rewind(keep)
            elif cur > keep:
                dcache.crop(-(cur - keep))
            xs: list[int] = []
            ps: list[float] = []
            hs: list[float] = []
            x = d_ids[j]
            for _ in range(off_depth):
                step = torch.tensor([[x]], device=device)
                if run is not None:
                    lg = run.forward(step, 1)[0, :vocab].float()
                else:
                    lg = draft(input_ids=step, **cache_kw(draft, dcache), use_cache=True,
                               logits_to_keep=1).logits[0, -1, :vocab].float()
                pr = torch.softmax(lg, -1)
                p, xx = pr.max(-1)
                x = int(xx)
                xs.append(x)
                ps.append(float(p))
                hs.append(float(torch.special.entr(pr).sum()))
                if x in eos:
                    break
            off_ids[j] = xs
            off_prob[j] = ps
            off_ent[j] = hs
        for j in range(n):  # a disagreement whose own token is EOS stops drafting there: nothing follows
            if j not in off_ids and d_ids[j] != toks[j]:
                off_ids[j], off_prob[j], off_ent[j] = [], [], []
    return Trace(prompt_id=prompt_id, prompt_ids=list(prompt_ids), tokens=toks, draft_ids=d_ids, draft_prob=d_prob,
                 off_ids=off_ids, off_prob=off_prob, off_depth=off_depth, eos_ids=sorted(eos),
                 max_new_tokens=max_new_tokens, session_s=header_s + t_prefill + d_prefill, plain_s=plain_s,
                 target_flips=flips, fragile=fragile, draft_entropy=d_ent, off_entropy=off_ent)


# -- validation against the live decoder ---------------------------------------------------------------


def session_trace(pair: ModelPair, header: SessionHeader, steps: Sequence[StepEvent]) -> Trace:
    """The greedy trace of a finished session: its tokens, the draft's teacher-forced argmax, its off-path proposals."""
    import torch

    tokens = [e.id for s in steps for e in s.emitted]
    prompt = list(header.prompt_ids)
    n = len(tokens)
    draft = pair.draft
    assert draft is not None, "a session's trace is of a pair with a draft model"
    device = torch.device(pair.device)
    vocab = shared_vocab(pair.target, draft)
    with torch.no_grad():
        full = torch.tensor([prompt + tokens], device=device)
        logits = draft(input_ids=full, use_cache=False, logits_to_keep=n + 1).logits[0, :n, :vocab].float()
        probs = torch.softmax(logits, -1)
        top, arg = probs.max(-1)
        d_ent = torch.special.entr(probs).sum(-1).tolist()
    d_ids, d_prob = arg.tolist(), top.tolist()
    eos = sorted(int(i) for i in pair.eos_ids)
    off_ids: dict[int, list[int]] = {}
    off_prob: dict[int, list[float]] = {}
    off_ent: dict[int, list[float]] = {}
    pos = 0
    for s in steps:
        a = s.accepted
        m = pos + a
        if a < len(s.drafted) and m < n and s.drafted[a].id == d_ids[m] != tokens[m]:
            # the step drafted past its miss: what the draft proposed after its own wrong token at m
            off_ids[m] = [t.id for t in s.drafted[a + 1:]]
            off_prob[m] = [t.top_prob for t in s.drafted[a + 1:]]
            off_ent[m] = [NAN if t.entropy is None else t.entropy for t in s.drafted[a + 1:]]
        pos += len(s.emitted)
    for j in range(n):  # other misses: nothing recorded after them, so the oracle's window stops one past the run
        if d_ids[j] != tokens[j] and j not in off_ids:
            off_ids[j], off_prob[j], off_ent[j] = [], [], []
    return Trace(prompt_id=f"turn {header.turn + 1}", prompt_ids=prompt, tokens=tokens, draft_ids=d_ids,
                 draft_prob=d_prob, off_ids=off_ids, off_prob=off_prob, draft_entropy=d_ent, off_entropy=off_ent,
                 off_depth=max((len(v) for v in off_ids.values()), default=0), eos_ids=eos, max_new_tokens=n)


__all__ = ["FRAGILE_GAP", "target_run", "record_trace", "session_trace"]
