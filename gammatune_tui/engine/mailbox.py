"""The pending-settings mailbox: what the user asked for from any thread, taken by a step loop at its next step.

A chat changes policy settings or sampling while an answer streams; the
change must land between two steps, never inside one, and two changes asked
for before the next step must both hold (a new γ0 and then a new temperature
are one change of both, the later ask winning where they overlap). The live
decoder and the synthetic source both play steps, so both read their
requests through this one class.
"""

from __future__ import annotations

import threading

from .common.sampling import SamplingConfig
from .policies import PolicySettings

Pending = tuple[PolicySettings | None, SamplingConfig | None]
"""(settings, sampling) asked for since the last take; None where that part was not asked for."""


class SettingsMailbox:
    """Holds at most one pending (settings, sampling); `put` from any thread, `take` at a step boundary."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: Pending | None = None

    def put(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        """Ask for `settings` and/or `sampling`; a part left None keeps what an earlier, untaken ask said."""
        with self._lock:
            old = self._pending
            if old is not None:
                settings = settings if settings is not None else old[0]
                sampling = sampling if sampling is not None else old[1]
            self._pending = (settings, sampling)

    def take(self) -> Pending | None:
        """What was asked for since the last take (None: nothing), emptying the mailbox."""
        with self._lock:
            pending, self._pending = self._pending, None
        return pending


__all__ = ["Pending", "SettingsMailbox"]
