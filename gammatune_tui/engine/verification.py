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
from .drafting import Draft
from .runners import Runner
from .sampling import Served, greedy_accept, residual, sample, sampled_accept


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
    """Feed [tokens the target has not cached, drafts...] and decide; rows 0..d are the target's laws."""
    d_ids = draft.ids
    d = len(d_ids)
    t_len = runner.length
    vin = torch.tensor([ids[t_len:] + d_ids], device=device)
    n_new = vin.shape[1]
    tlogits = runner.forward(vin, d + 1)
    if vocab_cut is not None:
        tlogits = tlogits[:, :vocab_cut]
    tlogits = tlogits.float()
    # rows 0..d: the target's distribution after ids[:n] + d_ids[:i]
    if served.greedy:
        tprobs = torch.softmax(tlogits, dim=-1)
        targmax = tlogits.argmax(dim=-1)
        if d:
            didx = torch.tensor(d_ids, device=device)
            d_p = tprobs[:d].gather(1, didx.view(-1, 1)).view(-1)
            pack = torch.cat((targmax.to(tprobs.dtype), d_p)).tolist()
            t_arg = [int(v) for v in pack[: d + 1]]
            t_probs = pack[d + 1:]
        else:
            t_arg = [int(targmax[0])]
            t_probs = []
        a = greedy_accept(d_ids, t_arg)
        y = t_arg[a]
    else:
        p = served.probs(tlogits)
        if d:
            didx = torch.tensor(d_ids, device=device)
            p_ch = p[:d].gather(1, didx.view(-1, 1)).view(-1)
            if draft.point_mass:  # a deterministic proposal: q = δ_x, so accept with p(x), correct from p − δ_x
                q_ch = torch.ones_like(p_ch)
                a = sampled_accept(p_ch, q_ch, gen)
                q_a = torch.zeros_like(p[0])
                if a < d:
                    q_a[d_ids[a]] = 1.0
            else:
                q = torch.stack(draft.q_rows)
                q_ch = q.gather(1, didx.view(-1, 1)).view(-1)
                a = sampled_accept(p_ch, q_ch, gen)
                q_a = q[a] if a < d else q[0]
            t_probs = p_ch.tolist()
            law = residual(p[a], q_a) if a < d else p[d]
        else:
            a = 0
            t_probs = []
            law = p[0]
        y = int(sample(law.unsqueeze(0), gen)[0])
    return Verdict(accepted=a, token=y, target_probs=t_probs, target_end=t_len + n_new)


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
