"""What a step costs when a server runs B sequences at once, timed on the user's own models here.

At batch 1 a verify of K + 1 tokens costs little more than one token (the
weights are read once either way), which is why speculation pays. A server
batching B requests verifies B × (K + 1) tokens a step: as B grows the pass
turns from reading weights to computing, the K extra tokens stop being free,
and speculation stops paying (vLLM #26504: +23 % at batch 1, −16 % at 32,
acceptance unchanged). Acceptance is a property of each sequence and comes
from the traces; what changes with B is the price of a step, so that is what
is timed.

It is timed by running the step itself (ragged.py, the code live batched
decoding runs): the prompts cycled to B rows and left-padded, each row's cache
filled to where the live loop is halfway through the answer (the target alone
adds one column a token; a speculative step K + 1 columns whatever it kept,
the rejected ones masked, so its cache is longer), then one step of the
target alone and one speculative step per K, each cut back afterwards so every
timing meets the same cache. Each step splits into its forwards (the verify,
the first draft forward, which also reads what the draft has not, and the
others) and the rest: the overhead the forwards alone leave out, which on a
4 ms forward is a share worth pricing, and which speculation pays K + 1 times
a step. The sizes are timed in rounds, each round every (B, K) once in turn,
so that a busy spell slows one round rather than one batch size; the rounds
give the spread. Within a batch size's round the speculative steps come
first and the step of the target alone last, each timing after three
untimed runs: timed first, after one, right after another batch size's
work, it read 6–16 % dearer than live decoding of the demo pair in six runs
of six (mean 12 %; the cause is not known); timed this way, −4 to +15 %
(mean 4 %) in eight more (docs/benchmarks-concurrency.md, runs D). A model
whose cache cannot be cut back (hybrid state) is refused in one line: its
batched step cannot be timed this way.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import torch

from ...errors import InvalidParameter
from ..batch_prices import BatchCosts
from .ragged import Clock, Ragged, SpecState, plain_step, spec_step

if TYPE_CHECKING:   # transformers loads with the pair
    from transformers import PreTrainedModel

WARM = 3          # runs of one (B, K) step before it is timed: the first after other work reads dear (below)
REPEATS = 7       # timings of one (B, K) step in a round; their median is the round's
ROUNDS = 3        # rounds over every (B, K); their spread is the timing spread


def _ragged(model: PreTrainedModel, rows: list[list[int]], pad: int, device: Any, clock: Clock) -> Ragged:
    with torch.no_grad():
        r = Ragged(model, rows, pad, device, clock)
    if r.cache is None or not callable(getattr(r.cache, "crop", None)):
        raise InvalidParameter(f"--batch: {type(model).__name__}'s cache cannot be cut back (hybrid state), so its "
                               "batched step cannot be timed here")
    return r


def _filled(r: Ragged, rows: list[list[int]], columns: int, real: int) -> None:
    """`columns` more columns a row (the rows' own tokens again), `real` of them spread evenly as real, the rest
    masked: the cache a row has halfway through its answer."""
    if columns <= 0:
        return
    ids = torch.tensor([(row * (columns // len(row) + 1))[:columns] for row in rows], device=r.device)
    flags = [int((j + 1) * real // columns > j * real // columns) for j in range(columns)]
    with torch.no_grad():
        r.feed(ids, torch.tensor([flags] * len(rows), device=r.device))


def _medians(samples: Sequence[Sequence[float]]) -> list[float]:
    return [statistics.median(x) for x in zip(*samples)]


class _Timer:
    """One batch size's two ragged batches (target, draft), prefilled once, and its steps timed from them."""

    def __init__(self, target: PreTrainedModel, draft: PreTrainedModel | None, rows: list[list[int]], pad: int,
                 device: Any, clock: Clock):
        self.rows, self.pad, self.clock = rows, pad, clock
        self.t = _ragged(target, rows, pad, device, clock)
        self.d = _ragged(draft, rows, pad, device, clock) if draft is not None else None

    @torch.no_grad()
    def plain(self, columns: int) -> tuple[float, float]:
        """(target forward, the rest) of one step of the target alone, `columns` into the answer."""
        start = self.t.mark()
        _filled(self.t, self.rows, columns, columns)
        mid = self.t.mark()
        nxt = self.t.logits[:, -1].argmax(-1)
        step, rest = self._target_timed(mid, lambda: plain_step(self.t, nxt, [[] for _ in self.rows]))
        self.t.back_to(start)
        return step, rest

    def _target_timed(self, mid: tuple[int, torch.Tensor, torch.Tensor], body: Callable[[], object]
                      ) -> tuple[float, float]:
        """(the target's forwards, the rest) of `body`: the medians of REPEATS runs after WARM that are not timed
        (a new shape allocates; the steps after other work read dear), the target's cache cut back to `mid` after
        each."""
        samples: list[list[float]] = []
        for i in range(REPEATS + WARM):
            self.t.timed.clear()
            t0 = self.clock()
            body()
            wall = self.clock() - t0
            if i >= WARM:
                samples.append([sum(self.t.timed), wall - sum(self.t.timed)])
            self.t.back_to(mid)
        step, rest = _medians(samples)
        return step, rest

    @torch.no_grad()
    def verify_only(self, k: int, columns: int, real: int) -> tuple[float, float, float, float]:
        """A source without a draft model (prompt lookup, a head's proposals priced elsewhere): its step's verify of
        B × (K + 1), the acceptance and the cut, no draft forward (its price 0, as the source's own is not here)."""
        start = self.t.mark()
        _filled(self.t, self.rows, columns, real)
        mid = self.t.mark()
        window = torch.tensor([(row * (k + 1))[-(k + 1):] for row in self.rows], device=self.t.device)

        def verify() -> None:
            v = self.t.feed(window, torch.ones_like(window)).argmax(-1)
            acc = (v[:, :k] == window[:, 1:]).long().cumprod(1).sum(1)
            self.t.keep(k + 1, acc + 1)
            acc.tolist()

        ver, rest = self._target_timed(mid, verify)
        self.t.back_to(start)
        return ver, 0.0, 0.0, rest

    @torch.no_grad()
    def spec(self, k: int, columns: int, real: int) -> tuple[float, float, float, float]:
        """(verify, first draft forward, each later draft forward, the rest) of one speculative step at K."""
        if self.d is None:
            return self.verify_only(k, columns, real)
        starts = self.t.mark(), self.d.mark()
        _filled(self.t, self.rows, columns, real)
        _filled(self.d, self.rows, columns, real)
        mids = self.t.mark(), self.d.mark()
        state = SpecState.first(torch.tensor([row[-1] for row in self.rows], device=self.t.device), self.pad)
        samples: list[list[float]] = []
        for i in range(REPEATS + WARM):
            self.t.timed.clear()
            self.d.timed.clear()
            out: list[list[int]] = [[] for _ in self.rows]
            t0 = self.clock()
            spec_step(self.t, self.d, state, k, self.pad, out)
            wall = self.clock() - t0
            if i >= WARM:
                first, later = self.d.timed[0], self.d.timed[1:]
                rest = wall - sum(self.t.timed) - sum(self.d.timed)
                samples.append([sum(self.t.timed), first, statistics.mean(later) if later else first, rest])
            self.t.back_to(mids[0])
            self.d.back_to(mids[1])
        self.t.back_to(starts[0])
        self.d.back_to(starts[1])
        m = _medians(samples)
        return m[0], m[1], m[2], m[3]


def time_batches(target: PreTrainedModel, draft: PreTrainedModel | None, prompts: Sequence[Sequence[int]],
                 answer: Mapping[int, tuple[int, int]], batches: Sequence[int], ks: Sequence[int],
                 device: torch.device | str = "cpu", progress: Callable[[str], None] = lambda _: None,
                 pad: int = 0, rounds: int = ROUNDS, after: Callable[[int, int], None] = lambda _r, _b: None,
                 clock: Clock = time.perf_counter) -> BatchCosts:
    """Every batch size's step of the target alone and speculative step at each K, split into their parts.

    `prompts` are cycled to B rows; `answer` maps K (0: the target alone) to
    (columns, real columns) a row's cache holds past its prompt halfway through
    the answer. `after(round, B)` runs after each batch size's round (the live
    benchmark decodes there, so its runs and these timings alternate); `clock`
    is the one the live runs use (ragged.py).
    """
    rows_of = [list(p) for p in prompts if p]
    if not rows_of:
        raise InvalidParameter("--batch: no prompt to time the batched steps with")
    ks = sorted({k for k in ks if k > 0})
    width = max(map(len, rows_of))
    out = BatchCosts(width + answer.get(0, (0, 0))[0])
    out.spec_context = {k + 1: width + answer.get(k, (0, 0))[0] for k in ks}
    timers: dict[int, _Timer] = {}
    for b in batches:
        progress(f"prefilling batch {b}")
        timers[b] = _Timer(target, draft, [rows_of[i % len(rows_of)] for i in range(b)], pad, device, clock)
    for r in range(rounds):
        for b in batches:
            progress(f"timing batch {b}, round {r + 1} of {rounds}")
            plain_s = out.step_s.setdefault(b, [])
            out.verify_s.setdefault(b, {}).setdefault(1, plain_s)
            over = out.overhead_s.setdefault(b, {})
            over.setdefault(1, [])
            firsts, laters = [], []
            for k in ks:
                cols, real = answer.get(k, (0, 0))
                ver, first, later, rest = timers[b].spec(k, cols, real)
                out.verify_s[b].setdefault(k + 1, []).append(ver)
                over.setdefault(k + 1, []).append(rest)
                firsts.append(first)
                laters.extend([later] if k > 1 else [])
            step, rest = timers[b].plain(answer.get(0, (0, 0))[0])   # last: see above
            plain_s.append(step)
            over[1].append(rest)
            out.draft_first_s.setdefault(b, []).append(statistics.median(firsts) if firsts else 0.0)
            out.draft_s.setdefault(b, []).append(statistics.median(laters or firsts or [0.0]))
            after(r, b)
    return out


__all__ = ["REPEATS", "ROUNDS", "time_batches"]
