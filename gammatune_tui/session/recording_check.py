"""A recording's consistency: what the engine always writes, checked before anything is replayed.

`recording.py` checks each line on its own (JSON, fields, types); this module
checks the lines against each other, because a hand-edited or spliced file can
be well-formed line by line and still impossible as a session — 50 MB of one
step repeated played back as 278,788 tokens/s. Every
session the engine writes (run, chat, compare, the shipped demos) holds:

- steps numbered 0, 1, 2, … within a session;
- each step emits its accepted draft tokens plus one target token
  (only a session's last step may emit fewer: it stopped at EOS or the budget);
- elapsed time that never goes backwards;
- a summary whose tokens, steps and accepted count are the steps' own, and
  whose tokens/s is its tokens over its wall time.

A violation is a `RecordingError` naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

from ..engine.events import SessionSummary, StepEvent
from ..errors import RecordingError

TIME_SLACK_S = 1e-3     # rounding in the recorded seconds
RATE_SLACK = 0.02       # tokens/s as recorded vs tokens / wall_s (rounded on write)


class SessionChecker:
    """Fed one session's steps and summary in file order; raises on the first impossible line."""

    def __init__(self, path: Path):
        self.path = path
        self.steps = 0
        self.tokens = 0
        self.accepted = 0
        self.last: StepEvent | None = None
        self.last_line = 0

    def _fail(self, line: int, what: str) -> RecordingError:
        return RecordingError(f"{self.path}: line {line}: {what} (was this recording edited or spliced?)")

    def step(self, line: int, ev: StepEvent) -> None:
        prev = self.last
        if ev.step != self.steps:
            raise self._fail(line, f"step {ev.step} where step {self.steps} belongs "
                                   "(a session's steps are numbered 0, 1, 2, …)")
        if prev is not None and len(prev.emitted) != prev.accepted + 1:
            raise self._fail(self.last_line, self._emitted_message(prev))
        if len(ev.emitted) > ev.accepted + 1:
            raise self._fail(line, self._emitted_message(ev))
        if prev is not None and ev.elapsed_s + TIME_SLACK_S < prev.elapsed_s:
            raise self._fail(line, f"elapsed time goes backwards ({ev.elapsed_s:g} s after {prev.elapsed_s:g} s)")
        self.steps += 1
        self.tokens += len(ev.emitted)
        self.accepted += ev.accepted
        self.last, self.last_line = ev, line

    @staticmethod
    def _emitted_message(ev: StepEvent) -> str:
        return (f"step {ev.step} emits {len(ev.emitted)} tokens after accepting {ev.accepted} (a step emits its "
                "accepted draft tokens plus one from the target; only a session's last step may emit fewer)")

    def summary(self, line: int, s: SessionSummary) -> None:
        if s.steps != self.steps:
            raise self._fail(line, f"the summary counts {s.steps} steps, the session has {self.steps}")
        if s.tokens != self.tokens:
            raise self._fail(line, f"the summary counts {s.tokens} tokens, the steps emit {self.tokens}")
        if (s.accepted or s.drafted) and s.accepted != self.accepted:
            raise self._fail(line, f"the summary counts {s.accepted} accepted tokens, the steps {self.accepted}")
        if self.last is not None and s.wall_s and s.wall_s + TIME_SLACK_S < self.last.elapsed_s:
            raise self._fail(line, f"the summary's wall time {s.wall_s:g} s is shorter than the steps' "
                                   f"{self.last.elapsed_s:g} s")
        if s.wall_s > 0 and s.tokens:
            rate = s.tokens / s.wall_s
            if abs(s.tokens_per_s - rate) > RATE_SLACK * rate + 0.1:
                raise self._fail(line, f"the summary's {s.tokens_per_s:,.1f} tokens/s is not its {s.tokens} tokens "
                                       f"over {s.wall_s:g} s ({rate:,.1f} tokens/s)")


__all__ = ["SessionChecker"]
