"""The timing passes' cost-planning sessions, played on the second core while the sweep plays on the first.

After the traces and the decoder's timing, `bench --simulate` is pure Python
on one core: the Table 2 sweep under the pooled cost model, then every share
of the oracle priced again under each timing pass (`reference.share_rows`).
The policies that plan by cost (costaware, adaptive-k …) decide from the
prices, so `replays.Replays` plays them again under each pass: about 40 % of
the simulation's CPU (docs/benchmarks-first-simulate.md). Those sessions depend on
nothing the sweep computes — only a trace, a policy and that pass's cost
model — so a forked child plays them while the parent plays the sweep, and
sends them back (records and window counts, plain numbers) into the parent's
memo; `share_rows` then prices them instead of playing them. The same code
on the same inputs gives the same floats: the tables and the JSON are those
of a run on one core, and no session is played twice.

No second core (affinity), no `fork` (Windows, macOS' default), no timing
pass, or a child that fails: the parent plays them itself, as before.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ...engine.policies import PolicySettings
from ..sim.cost_model import CostModel
from ..sim.replays import Replays
from ..sim.session_play import plans_by_cost
from ..sim.sim_trace import SimTrace

if TYPE_CHECKING:   # multiprocessing loads only where a child is started
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _by_cost(methods: Sequence[Any], gammas: Sequence[int], params: dict[str, Any]) -> list[PolicySettings]:
    """The settings `reference.share_rows` plays for the methods that plan by cost (entries as it reads them)."""
    out = []
    for entry in methods:
        _, m, p = (entry, entry, params) if isinstance(entry, str) else entry
        settings = [PolicySettings.build(m, g, **p) for g in gammas]
        if settings and plans_by_cost(settings[0].make()):
            out += settings
    return out


def _child(conn: Connection, traces: Sequence[SimTrace], passes: Sequence[CostModel], settings: list[PolicySettings],
           max_new: int | None) -> None:
    """In the child: every (pass, setting, trace) session, sent back by the traces' and passes' positions."""
    try:
        replays = Replays()
        for cost in passes:
            for s in settings:
                for t in traces:
                    replays.play(t, s.make, s, max_new, cost)
        where_t = {id(t): i for i, t in enumerate(traces)}
        where_c = {id(c): i for i, c in enumerate(passes)}
        conn.send([(where_t[id(t)], key, budget, where_c[id(c)], rec, windows)
                   for t, key, budget, c, rec, windows in replays.played_by_cost()])
    except BaseException:   # Ctrl+C reaches the child too; the parent then plays them itself, or stops
        pass
    finally:
        conn.close()


class PassSessions:
    """The timing passes' cost-planning sessions, started in a child now and kept into a `Replays` by `fill`."""

    def __init__(self, traces: Sequence[SimTrace], passes: Sequence[CostModel], methods: Sequence[Any],
                 gammas: Sequence[int], params: dict[str, Any] | None, max_new: int | None):
        self.traces, self.passes = list(traces), list(passes)
        self.proc: BaseProcess | None = None
        self.conn: Connection | None = None   # our end of the pipe: set, and cleared, with `proc`
        settings = _by_cost(methods, gammas, dict(params or {}))
        if not self.passes or not settings or _cores() < 2:
            return
        try:
            import multiprocessing as mp

            ctx = mp.get_context("fork")
            self.conn, theirs = ctx.Pipe(duplex=False)
            self.proc = ctx.Process(target=_child, args=(theirs, self.traces, self.passes, settings, max_new),
                                    daemon=True)
            self.proc.start()
            theirs.close()
        except (ValueError, OSError):   # no fork on this platform, or no process left: one core it is
            self.proc = self.conn = None

    def fill(self, replays: Replays) -> int:
        """Keep the child's sessions in `replays` (what it could not play is played there later); how many."""
        if self.proc is None:
            return 0
        assert self.conn is not None   # set with `proc`
        try:
            got = self.conn.recv()
        except (EOFError, OSError):   # the child died: share_rows plays them
            return 0
        finally:
            self.close()
        for ti, key, budget, ci, rec, windows in got:
            replays.keep(self.traces[ti], key, budget, self.passes[ci], rec, windows)
        return len(got)

    def close(self) -> None:
        """Stop the child if it still runs (Ctrl+C, an error in the parent) and reap it."""
        if self.proc is None:
            return
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join()
        assert self.conn is not None   # set with `proc`
        self.conn.close()
        self.proc = self.conn = None


__all__ = ["PassSessions"]
