"""What a greedy or sampled trace says about each drafted token's statistics, read only when a policy asks.

Kept apart from the simulator's loop (simulate.py): the fast path of a
policy that never stops early needs a window's statistics only if that
policy's update reads them, so they are a lazy view over the trace; and a
trace recorded before entropy was kept plays with NaN (unknown) there.
"""

from __future__ import annotations

from collections import abc
from typing import Mapping, Protocol, Sequence, overload

from ...engine.policies.policy_base import TokenStats

NAN = float("nan")


class Unknown:
    """Entropies of a trace recorded before they were kept: NaN at every position."""

    def __getitem__(self, i: int) -> float:
        return NAN


class UnknownRows:
    def __getitem__(self, j: int) -> "Unknown":
        return Unknown()


class DraftRows(Protocol):
    """What a window's statistics read of a draft model's trace (model_trace.py `Trace`, which imports this)."""

    @property
    def draft_prob(self) -> list[float]: ...

    @property
    def draft_top(self) -> list[float] | None: ...

    @property
    def off_prob(self) -> dict[int, list[float]]: ...

    @property
    def off_top(self) -> dict[int, list[float]] | None: ...


class TraceWindow(abc.Sequence[TokenStats]):
    """The statistics of the d tokens a fast-path step drafted from position n (a of them matched), in order.

    Read from the trace only when a policy's update reads them: on the path up
    to and including the first disagreement, then the draft's proposals after
    its own token there.
    """

    def __init__(self, trace: DraftRows, dent: Sequence[float] | Unknown,
                 off_ent: Mapping[int, Sequence[float]] | UnknownRows, n: int, a: int, d: int) -> None:
        self.trace, self.dent, self.off_ent, self.n, self.a, self.d = trace, dent, off_ent, n, a, d

    def __len__(self) -> int:
        return self.d

    @overload
    def __getitem__(self, i: int) -> TokenStats: ...

    @overload
    def __getitem__(self, i: slice) -> list[TokenStats]: ...

    def __getitem__(self, i: int | slice) -> TokenStats | list[TokenStats]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.d))]
        if not -self.d <= i < self.d:
            raise IndexError(i)
        i %= self.d
        t, pos = self.trace, self.n + i
        if i <= self.a:   # on the path: the matched tokens, then the draft's own token at the first disagreement
            top = t.draft_top[pos] if t.draft_top is not None else t.draft_prob[pos]
            return TokenStats(top, t.draft_prob[pos], self.dent[pos])
        m, k = self.n + self.a, i - self.a - 1
        top = t.off_top[m][k] if t.off_top is not None else t.off_prob[m][k]
        return TokenStats(top, t.off_prob[m][k], self.off_ent[m][k])
