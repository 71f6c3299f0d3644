"""B sequences decoded together as a server steps them: one ragged batch per model, greedy, exact.

One module runs both the live batched decoding (benchmarks/batched_live.py)
and the doctor's timing of a batched step (batch_costs.py), so the step the
doctor prices is the step that runs live: the same forwards over the same
mask and cache, and the same work around them (each forward's mask
concatenation and positions, the argmax, the acceptance, cutting the
rejected columns back to masked ones, reading the tokens back to Python).

The batch is kept in one tensor as a server keeps it: prompts left-padded,
each token at its own position, and a sequence's rejected drafts left in the
cache as masked columns, so every row advances K + 1 columns a step whatever
it accepted. Each forward's seconds are kept (`timed`), so a timed step
splits into its forwards and the rest. The clock is wall time by default; on
a shared machine `time.thread_time` (this thread's CPU seconds: with one
torch thread every forward runs in it) leaves out the time other processes
held the core.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import torch

from ...engine.runners.hf_compat import cache_kw, output_cache

Clock = Callable[[], float]

if TYPE_CHECKING:   # transformers loads with the pair
    from transformers import PreTrainedModel


class Ragged:
    """One model's side of a ragged batch: its cache, which of its columns are real, and each row's length."""

    def __init__(self, model: PreTrainedModel, prompts: Sequence[Sequence[int]], pad: int, device: Any = "cpu",
                 clock: Clock = time.perf_counter):
        self.clock = clock
        width = max(map(len, prompts))
        self.device = device
        ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=device)
        self.mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
        self.lengths = torch.tensor([len(p) for p in prompts], device=device)
        self.model = model
        self.cache: Any = None
        self.timed: list[float] = []             # each forward's seconds, in order (cleared by whoever reads it)
        self.logits = self._forward(ids, (self.mask.cumsum(1) - 1).clamp(min=0))[:, -1:]

    def _forward(self, ids: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        t0 = self.clock()
        out = self.model(input_ids=ids, attention_mask=self.mask, position_ids=pos,
                         **cache_kw(self.model, self.cache), use_cache=True)
        self.timed.append(self.clock() - t0)
        self.cache = output_cache(out)
        return out.logits

    def feed(self, ids: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
        """Columns `ids` (B × n) appended; `real` (B × n, 0/1) says which are tokens and which fill a ragged row."""
        pos = self.lengths[:, None] + real.cumsum(1) - 1
        self.mask = torch.cat([self.mask, real], 1)
        logits = self._forward(ids, pos.clamp(min=0))
        self.lengths = self.lengths + real.sum(1)
        return logits

    def keep(self, n_new: int, kept: torch.Tensor) -> None:
        """Of the last `n_new` columns, keep the first `kept[b]` of row b as real; the rest become masked."""
        cols = torch.arange(n_new, device=self.device)[None, :]
        tail = self.mask[:, -n_new:]
        keep = (cols < kept[:, None]) & tail.bool()
        self.lengths = self.lengths - tail.sum(1) + keep.sum(1)
        self.mask = torch.cat([self.mask[:, :-n_new], keep.long()], 1)

    def mark(self) -> tuple[int, torch.Tensor, torch.Tensor]:
        """The state to come back to (`back_to`): the columns, the mask and the lengths."""
        return self.mask.shape[1], self.mask, self.lengths

    def back_to(self, state: tuple[int, torch.Tensor, torch.Tensor]) -> None:
        """Drop every column fed since `mark` (the cache cut back with it), as if they had never been fed."""
        width, self.mask, self.lengths = state
        extra = self.cache.get_seq_length() - width
        if extra > 0:
            self.cache.crop(-extra)    # transformers 5: a negative count drops that many tokens


@dataclass
class SpecState:
    """Between two speculative steps: each row's last token from the target, and what the draft has not read yet
    (up to two tokens a row: a fully accepted window leaves its last draft unread)."""

    last: torch.Tensor
    pending: torch.Tensor
    pending_real: torch.Tensor

    @classmethod
    def first(cls, last: torch.Tensor, pad: int) -> SpecState:
        """Before a first speculative step: the draft has read the prompt, not the target's token `last`."""
        ones = torch.ones_like(last)
        return cls(last, torch.stack([torch.full_like(last, pad), last], 1), torch.stack([ones * 0, ones], 1))


def start(target: Ragged, pad: int) -> tuple[SpecState, list[list[int]]]:
    """The target's first token of each row (as `generate`'s), and the state a first speculative step starts from."""
    last = target.logits[:, -1].argmax(-1)
    return SpecState.first(last, pad), [[x] for x in last.tolist()]


def plain_step(target: Ragged, nxt: torch.Tensor, out: list[list[int]]) -> torch.Tensor:
    """One step of the target alone: each row's token read back, fed, and the next one picked."""
    for row, x in zip(out, nxt.tolist()):
        row.append(x)
    ones = torch.ones(nxt.shape[0], 1, dtype=torch.long, device=nxt.device)
    return target.feed(nxt[:, None], ones)[:, -1].argmax(-1)


def spec_step(target: Ragged, draft: Ragged, s: SpecState, k: int, pad: int, out: list[list[int]]) -> SpecState:
    """One speculative step at a fixed K, greedy: K draft forwards of B rows (the first also reads what the draft
    has not), one target forward of B × (K + 1), each row's agreeing prefix kept, the rest masked."""
    B = s.last.shape[0]
    ones = torch.ones(B, 1, dtype=torch.long, device=s.last.device)
    drafts = []
    logits = draft.feed(s.pending, s.pending_real)[:, -1]
    for i in range(k):
        x = logits.argmax(-1)
        drafts.append(x)
        if i < k - 1:
            logits = draft.feed(x[:, None], ones)[:, -1]
    window = torch.stack([s.last, *drafts], 1)                  # B × (K + 1)
    v = target.feed(window, torch.ones(B, k + 1, dtype=torch.long, device=window.device)).argmax(-1)
    acc = (v[:, :k] == window[:, 1:]).long().cumprod(1).sum(1)  # drafts kept per row
    target.keep(k + 1, acc + 1)
    if k > 1:                                                   # the drafts it read: d1 … d(K-1)
        draft.keep(k - 1, acc.clamp(max=k - 1))
    fix = v.gather(1, acc[:, None])[:, 0]                       # the target's token after the kept drafts
    for row, w, a, f in zip(out, window[:, 1:].tolist(), acc.tolist(), fix.tolist()):
        row.extend(w[:a] + [f])
    full = acc == k
    pending = torch.stack([torch.where(full, window[:, k], torch.full_like(fix, pad)), fix], 1)
    return SpecState(fix, pending, torch.stack([full.long(), torch.ones_like(fix)], 1))


@torch.no_grad()
def plain(target: PreTrainedModel, prompts: Sequence[Sequence[int]], new: int, pad: int,
          clock: Clock = time.perf_counter) -> tuple[list[list[int]], float]:
    """The target alone, B rows together, `new` steps after the prefill's token: each row's first `new` tokens (the
    last step's is not kept), and the seconds of the decode steps (the prefill left out)."""
    t = Ragged(target, prompts, pad, clock=clock)
    out: list[list[int]] = [[] for _ in prompts]
    nxt = t.logits[:, -1].argmax(-1)
    t0 = clock()
    for _ in range(new):
        nxt = plain_step(t, nxt, out)
    return out, clock() - t0


@torch.no_grad()
def speculative(target: PreTrainedModel, draft: PreTrainedModel, prompts: Sequence[Sequence[int]], new: int, k: int,
                pad: int, clock: Clock = time.perf_counter) -> tuple[list[list[int]], list[int], int, float]:
    """Greedy, fixed K, lockstep until every row has decoded `new` tokens past the prefill's first (as `plain`'s
    `new` steps do, and as a trace's steps count `new` tokens): every row's tokens (a row that got there first
    keeps decoding), the steps each row took (what its slot would cost a server that refills a finished slot),
    the batch's steps, and the decode steps' seconds (prefills left out)."""
    t, d = Ragged(target, prompts, pad, clock=clock), Ragged(draft, prompts, pad, clock=clock)
    state, out = start(t, pad)
    row_steps = [0] * len(prompts)
    steps = 0
    t0 = clock()
    while min(map(len, out)) < new + 1:
        state = spec_step(t, d, state, k, pad, out)
        steps += 1
        row_steps = [n if n else steps if len(o) >= new + 1 else 0 for n, o in zip(row_steps, out)]
    return out, row_steps, steps, clock() - t0


__all__ = ["Clock", "Ragged", "SpecState", "plain", "plain_step", "spec_step", "speculative", "start"]
