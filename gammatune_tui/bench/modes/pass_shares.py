"""The timing passes' shares of the oracle, played on the second core while the sweep plays on the first.

After the traces and the decoder's timing, `bench --simulate` is pure Python
on one core: the Table 2 sweep under the pooled cost model, then every
share of the oracle priced again under each timing pass
(`reference.share_rows`). The policies that plan by cost are played once per
pass, so the passes were half of the simulation's CPU (docs/benchmarks-newcomer.md).
They depend on nothing the sweep computes — only the traces and that pass's
cost model — so a forked child plays all but the first pass while the parent
plays the sweep, the pooled shares and the first pass; the child sends its
shares back as plain numbers. The same code on the same inputs: the same
floats, so the tables and the JSON are those of a run on one core.

No second core (affinity), no `fork` (Windows, macOS' default), a single
pass, or a child that fails: the parent plays every pass itself, as before.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from ..sim.cost_model import CostModel
from ..sim.reference import shares_under

Shares = dict[str, tuple[float, list[float], str]]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _child(conn: Any, traces: Sequence[Any], passes: Sequence[CostModel], methods: Sequence[Any],
           gammas: Sequence[int], params: dict[str, Any], max_new: int | None) -> None:
    """In the child: one Replays memo for its passes (the non-cost policies are played once for all of them)."""
    from ..sim.replays import Replays

    try:
        replays = Replays()
        conn.send([shares_under(traces, c, methods, gammas, params, max_new, replays=replays) for c in passes])
    except BaseException:   # Ctrl+C reaches the child too; the parent then plays the passes itself or stops
        pass
    finally:
        conn.close()


class PassShares:
    """`shares_under` for each timing pass: the later passes started in a child now, the first played on `result`."""

    def __init__(self, traces: Sequence[Any], passes: Sequence[CostModel], methods: Sequence[Any],
                 gammas: Sequence[int], params: dict[str, Any] | None, max_new: int | None):
        self.args = (traces, list(passes), list(methods), list(gammas), dict(params or {}), max_new)
        self.proc: Any = None
        self.conn: Any = None
        if len(passes) < 2 or _cores() < 2:
            return
        try:
            import multiprocessing as mp

            ctx = mp.get_context("fork")
            self.conn, theirs = ctx.Pipe(duplex=False)
            self.proc = ctx.Process(target=_child, args=(theirs, traces, list(passes)[1:], *self.args[2:]),
                                    daemon=True)
            self.proc.start()
            theirs.close()
        except (ValueError, OSError):   # no fork on this platform, or no process left: one core it is
            self.proc = self.conn = None

    def result(self, replays: Any) -> list[Shares]:
        """Every pass's shares, in order (the first with the sweep's `replays`, whose non-cost plays it reuses)."""
        traces, passes, methods, gammas, params, max_new = self.args
        if self.proc is None:
            return [shares_under(traces, c, methods, gammas, params, max_new, replays=replays) for c in passes]
        try:
            first = shares_under(traces, passes[0], methods, gammas, params, max_new, replays=replays)
            try:
                rest = self.conn.recv()
            except (EOFError, OSError):   # the child died: play its passes here
                rest = [shares_under(traces, c, methods, gammas, params, max_new, replays=replays)
                        for c in passes[1:]]
            return [first, *rest]
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child if it still runs (Ctrl+C, an error in the parent) and reap it."""
        if self.proc is None:
            return
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join()
        self.conn.close()
        self.proc = self.conn = None


__all__ = ["PassShares"]
