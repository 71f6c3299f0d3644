"""Phases 2–3 of a step: one target forward scores every draft; the accept rule keeps a prefix.

Greedy decoding accepts drafts while they match the target's argmax;
sampled decoding uses the rejection test of Leviathan et al., so the output
follows the target's distribution exactly either way. For a source that
proposes deterministically (prompt lookup) q is a point mass at the drafted
token: x is accepted with probability min(1, p(x)/1) = p(x) and a rejection
draws from norm(max(0, p − δ_x)), p with x removed. The target always adds
one token of its own (a correction after a rejection, else a bonus).
"""

from __future__ import annotations

from dataclasses import dataclass
import torch
from . import drafting
from .drafting import Draft
from .runners import Runner
from .sampling import Served, accepted_count, greedy_accept, residual, sample
from .staging import to_device


@dataclass
class Verdict:
    accepted: int
    token: int  # the target's own token after the accepted drafts
    target_probs: list[float]  # the target's probability of each drafted token
    target_end: int  # the target cache's length after the forward, before rewinding

    def kind(self, drafted: int) -> str:
        return "correction" if self.accepted < drafted else "bonus"


def verify_window(
    runner: Runner, ids: list[int], draft: Draft, *, served: Served, gen: torch.Generator,
    vocab_cut: int | None, device: torch.device,
) -> Verdict:
    """Feed [tokens the target has not cached, drafts...] and decide; rows 0..d are the target's laws.

    Everything is decided on the device and read back once (`drafting.host_read`),
    greedy or sampled; the ids go up without a blocking copy (staging.py).
    """
    d_ids = draft.ids
    d = len(d_ids)
    t_len = runner.length
    vin = to_device(ids[t_len:] + d_ids, device)
    n_new = vin.shape[1]
    tlogits = runner.forward(vin, d + 1)
    if vocab_cut is not None:
        tlogits = tlogits[:, :vocab_cut]
    tlogits = tlogits.float()
    didx = vin[0, n_new - d:]  # the drafted ids, already on the device
    # rows 0..d: the target's distribution after ids[:n] + d_ids[:i]
    if served.greedy:
        tprobs = torch.softmax(tlogits, dim=-1)
        targmax = tlogits.argmax(dim=-1)
        d_p = tprobs[:d].gather(1, didx.view(-1, 1)).view(-1)
        pack = drafting.host_read(torch.cat((targmax.to(tprobs.dtype), d_p)))
        t_arg = [int(v) for v in pack[: d + 1]]
        t_probs = pack[d + 1:]
        a = greedy_accept(d_ids, t_arg)
        return Verdict(accepted=a, token=t_arg[a], target_probs=t_probs, target_end=t_len + n_new)
    p = served.probs(tlogits)
    vocab = p.shape[1]
    p_ch = p[:d].gather(1, didx.view(-1, 1)).view(-1)
    # q for each drafted position, and a zero row after them: q_rows[a] is the law a rejection at a corrects
    q_rows = torch.zeros((d + 1, vocab), dtype=p.dtype, device=p.device)
    if d and draft.point_mass:  # a deterministic proposal: q = δ_x, so accept with p(x), correct from p − δ_x
        q_rows[torch.arange(d, device=p.device), didx] = 1.0
    elif d:
        q_rows[:d] = torch.stack(draft.q_rows).to(p.dtype)[:, :vocab]
    q_ch = q_rows[:d].gather(1, didx.view(-1, 1)).view(-1)
    a_dev = accepted_count(p_ch, q_ch, gen)
    law = residual(p.index_select(0, a_dev.view(1))[0], q_rows.index_select(0, a_dev.view(1))[0])
    y = sample(law.unsqueeze(0), gen)
    pack = drafting.host_read(torch.cat((a_dev.view(1).to(p.dtype), y.to(p.dtype), p_ch)))
    a, token = int(pack[0]), int(pack[1])
    return Verdict(accepted=a, token=token, target_probs=pack[2:], target_end=t_len + n_new)


def accept_tokens(drafted: list[int], accepted: int, token: int, eos: frozenset[int], remaining: int) -> list[int]:
    """The accepted drafts plus the target's token, cut after the first EOS and at the token budget."""
    new = drafted[:accepted] + [token]
    cut = len(new)
    for i, tid in enumerate(new):
        if tid in eos:
            cut = i + 1
            break
    return new[:min(cut, remaining)]


__all__ = ["Verdict", "verify_window", "accept_tokens"]
