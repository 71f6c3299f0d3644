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

import functools
from dataclasses import dataclass

import torch
from . import drafting
from .drafting import Draft, Pending
from .runners import Runner
from .common.sampling import Served, accepted_count, leading_run, residual, sample
from .common.staging import to_device
from .events import TargetKind
from .step_clock import StepClock


@dataclass
class Verdict:
    accepted: int
    token: int  # the target's own token after the accepted drafts
    target_probs: list[float]  # the target's probability of each drafted token
    # the tokens of the pass the kept window needed: what a policy prices (the simulator charges the same);
    # fewer than were fed when the window was cut after a drafted EOS once read
    verified: int = 0

    def kind(self, drafted: int) -> TargetKind:
        return "correction" if self.accepted < drafted else "bonus"


def verify_window(
    runner: Runner, ids: list[int], draft: Draft, *, served: Served, gen: torch.Generator,
    vocab_cut: int | None, device: torch.device, eos: frozenset[int] = frozenset(),
    clock: StepClock | None = None,
) -> Verdict:
    """Feed [tokens the target has not cached, drafts...] and decide; rows 0..d are the target's laws.

    One path for greedy and sampled decoding: each drafted token passes or
    fails its test (greedy: it is the target's argmax; sampled: u·q(x) < p(x)),
    the accepted count is the leading run of passes, cut at the window's end
    (a pending window ends after its first EOS: `_eos_cut`, the one place that
    cut is decided), and the target's token is read at that row (greedy: its
    argmax; sampled: a draw from the residual norm(max(0, p − q)), or from p
    after a full window). Everything is decided on the device and read back
    once (`drafting.host_read`), together with the draft's pending tokens
    (drafting/), which `draft.settle` then keeps up to the cut read back;
    the ids go up without a blocking copy (staging.py). `clock.verified()` is
    marked just before the read, so on a GPU the step's timing needs no sync
    of its own.
    """
    pend = draft.pending
    host_d = len(draft.ids)
    k = pend.size if pend is not None else 0
    d = host_d + k
    t_len = runner.length
    vin = to_device(ids[t_len:] + draft.ids, device)
    if pend is not None:
        vin = torch.cat((vin, pend.ids.view(1, -1)), dim=1)
    n_new = vin.shape[1]
    tlogits = runner.forward(vin, d + 1)
    if vocab_cut is not None:
        tlogits = tlogits[:, :vocab_cut]
    tlogits = tlogits.float()
    didx = vin[0, n_new - d:]  # the drafted ids, already on the device
    # rows 0..d: the target's law after ids[:n] + d_ids[:i] (the raw softmax when greedy: what p(x) reports)
    p = torch.softmax(tlogits, dim=-1) if served.greedy else served.probs(tlogits)
    p_ch = p[:d].gather(1, didx.view(-1, 1)).view(-1)
    cut = _eos_cut(didx, host_d, d, eos) if k and eos else None
    if served.greedy:
        targmax = tlogits.argmax(dim=-1)
        a_dev = _within(leading_run(didx == targmax[:d]), cut)
        token = targmax.index_select(0, a_dev.view(1))
    else:
        vocab = p.shape[1]
        # q for each drafted position, and a zero row after them: q_rows[a] is the law a rejection at a corrects
        q_rows = torch.zeros((d + 1, vocab), dtype=p.dtype, device=p.device)
        if d and draft.point_mass:  # a deterministic proposal: q = δ_x, so accept with p(x), correct from p − δ_x
            q_rows[torch.arange(d, device=p.device), didx] = 1.0
        elif d:
            q_rows[:d] = torch.stack(draft.q_rows + (pend.rows if pend is not None else [])).to(p.dtype)[:, :vocab]
        q_ch = q_rows[:d].gather(1, didx.view(-1, 1)).view(-1)
        a_dev = _within(accepted_count(p_ch, q_ch, gen), cut)
        if cut is not None:   # the row after the cut is the bonus row: q = 0 there
            q_rows = q_rows * (torch.arange(d + 1, device=p.device) < cut).unsqueeze(1).to(q_rows.dtype)
        law = residual(p.index_select(0, a_dev.view(1))[0], q_rows.index_select(0, a_dev.view(1))[0])
        token = sample(law.unsqueeze(0), gen)
    head = (a_dev.view(1), token.view(1)) + ((cut.view(1),) if cut is not None else ())
    pack = _read(clock, tuple(t.to(p.dtype) for t in head) + (p_ch,), pend)
    a, token_id = int(pack[0]), int(pack[1])
    kept = int(pack[2]) if cut is not None else d
    body = pack[len(head):]
    if k:
        tail = body[d:]
        draft.settle(tail[:k], tail[k:2 * k], tail[2 * k:3 * k], tail[3 * k:4 * k], kept - host_d)
    return Verdict(accepted=a, token=token_id, target_probs=body[:kept], verified=n_new - (d - kept))


def _within(accepted: torch.Tensor, cut: torch.Tensor | None) -> torch.Tensor:
    """No acceptance past the window's end once cut after its first EOS."""
    return accepted if cut is None else torch.minimum(accepted, cut)


def _read(clock: StepClock | None, parts: tuple[torch.Tensor, ...], pend: Pending | None) -> list:
    """The step's one read: the verdict's tensors, then the pending drafts' ids, top and chosen probabilities
    and entropies."""
    if pend is not None:
        dtype = parts[0].dtype
        parts = (*parts, pend.ids.to(dtype), pend.top.to(dtype), pend.chosen.to(dtype), pend.entropy.to(dtype))
    if clock is not None:
        clock.verified()
    return drafting.host_read(torch.cat(parts))


def _eos_cut(didx: torch.Tensor, host_d: int, d: int, eos: frozenset[int]) -> torch.Tensor:
    """Where the window ends once cut after its first EOS (d when none), as a 0-dim device tensor.

    Only the pending tail can hold an EOS before the window's end: a token read
    on the host that was an EOS ended drafting there.
    """
    eos_ids = _eos_ids(eos, didx.device)
    pos = torch.arange(d, device=didx.device)
    hit = torch.isin(didx, eos_ids) & (pos >= host_d)
    return torch.where(hit, pos + 1, torch.full_like(pos, d)).min()


@functools.lru_cache(maxsize=16)
def _eos_ids(eos: frozenset[int], device: torch.device) -> torch.Tensor:
    """The pair's EOS ids on the device: copied up once per pair and device, not once per step."""
    return to_device(sorted(eos), device).view(-1)


__all__ = ["Verdict", "verify_window"]
