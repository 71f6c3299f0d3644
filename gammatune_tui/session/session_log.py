"""The log of the sessions a screen shows: every step in order, and each session's `RunningStats`.

The chat, the replay player and each compare pane draw a stream of events
and answer questions about what they drew: which session a step belongs to
and its number in it ("turn 2 · step 3/40"), the steps of the running
session (for the change marks), every turn as (header, steps, summary) for
the copy keys and the HTML export, and the numbers of the session on screen.
One log answers them all, so no screen keeps lists and counters of its own.

It sits on the one tally: each session's numbers are a `RunningStats`
(stats.py, over `engine.events.tally`), fed here with every event it sees, and
nothing is counted twice. Steps are kept in one list across sessions (a
step's index in it is what the transcript and the inspector call it); a
session starts at its header. No Textual here: the screens own a log and
redraw from it.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Sequence

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from .hindsight import Hindsight
from .plain_speed import PlainSpeed
from .stats import RunningStats


class SessionLog:
    """Sessions in the order shown; `add` every event (a header opens a session)."""

    def __init__(self) -> None:
        self.steps: list[StepEvent] = []          # every step of every session, in order
        self.sessions: list[RunningStats] = []    # one per header seen
        self.starts: list[int] = []               # index in `steps` of each session's first step
        self._before = RunningStats()             # what `current` is before any header

    # -- feeding -----------------------------------------------------------------------------
    def add(self, ev: Event, *, plain: PlainSpeed | None = None) -> None:
        """Log one event. A header opens a session (`plain`: the plain decoding its speed is set against)."""
        if isinstance(ev, SessionHeader):
            stats = RunningStats(plain=plain)
            self.sessions.append(stats)
            self.starts.append(len(self.steps))
            stats.add(ev)
        elif isinstance(ev, StepEvent):
            self.steps.append(ev)
            self.current.add(ev)
        elif isinstance(ev, SessionSummary):
            self.current.add(ev)

    def set_hindsight(self, hindsight: Hindsight | None) -> None:
        """The running session's oracle check, made by the source once its events were over."""
        if hindsight is not None:
            self.current.hindsight = hindsight

    def drop_current(self) -> None:
        """Forget the running session (a replay stepping back redraws it from its header)."""
        del self.steps[self.current_start:]
        if self.sessions:
            self.sessions.pop()
            self.starts.pop()

    # -- reading -------------------------------------------------------------------------------
    @property
    def current(self) -> RunningStats:
        """The numbers of the session shown last (an empty tally before the first)."""
        return self.sessions[-1] if self.sessions else self._before

    @property
    def current_start(self) -> int:
        """Index in `steps` of the running session's first step."""
        return self.starts[-1] if self.starts else 0

    def current_steps(self) -> list[StepEvent]:
        """The steps of the running session so far."""
        return self.steps[self.current_start:]

    def session_of(self, index: int) -> tuple[int, int, int]:
        """(session, its first step, the step after its last) for global step `index`."""
        k = max(0, bisect_right(self.starts, index) - 1)
        start = self.starts[k] if self.starts else 0
        end = self.starts[k + 1] if k + 1 < len(self.starts) else len(self.steps)
        return k, start, end

    def header(self, session: int) -> SessionHeader | None:
        return self.sessions[session].header if 0 <= session < len(self.sessions) else None

    def turns(self) -> list[tuple[SessionHeader | None, Sequence[StepEvent], SessionSummary | None]]:
        """(header, steps, summary) of every session, in order."""
        bounds = [*self.starts, len(self.steps)]
        return [(st.header, self.steps[bounds[k]:bounds[k + 1]], st.summary)
                for k, st in enumerate(self.sessions) if k + 1 < len(bounds)]

    def end_ids(self, session: int, index: int) -> frozenset[int]:
        """The ids that end a turn, for the inspector at step `index`: the header's, or in a recording made
        before headers listed them, the textless token that an eos-ended session's last step ended on."""
        st = self.sessions[session] if 0 <= session < len(self.sessions) else None
        if st is None:
            return frozenset()
        if st.header is not None and st.header.end_ids:
            return frozenset(st.header.end_ids)
        s = st.summary
        _, _, end = self.session_of(index)
        last = self.steps[index].emitted[-1:] if index == end - 1 else []
        if s is not None and s.stop_reason == "eos" and last and last[0].text == "":
            return frozenset({last[0].id})
        return frozenset()
