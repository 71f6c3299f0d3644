"""How long a step's draft and verification took, without a sync of its own.

The decoder reads the device once per step for a whole-window policy: the
drafted window comes back together with the verdict (verification.py). On a
GPU the host then finishes `draft()` long before the device has drafted, so
a host clock around it would time kernel launches, not drafting. Here, on
CUDA, each mark records an event on the current stream; the spans are read
after the step's own read has waited for the device, so timing adds no
sync. On the CPU (and MPS) every call runs to completion before it returns
and the marks are `time.perf_counter()`.

The marks: `start` before drafting, `drafted` when the draft source returns,
`verified` just before the verdict is read (verification.py calls it), so
`draft_s` and `verify_s` are the device's own time on a GPU and the host's
elsewhere.
"""

from __future__ import annotations

import time

import torch


class StepClock:
    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.device = device
        if self.cuda:
            self._events = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        self._t = [0.0, 0.0, 0.0]

    def _mark(self, i: int) -> None:
        if self.cuda:
            self._events[i].record(torch.cuda.current_stream(self.device))
        else:
            self._t[i] = time.perf_counter()

    def start(self) -> None:
        self._mark(0)

    def drafted(self) -> None:
        self._mark(1)

    def verified(self) -> None:
        self._mark(2)

    def spans(self) -> tuple[float, float]:
        """(draft_s, verify_s) of the step; on CUDA, call after the step's read (the events are done by then)."""
        if self.cuda:
            start, drafted, verified = self._events
            return start.elapsed_time(drafted) / 1000.0, drafted.elapsed_time(verified) / 1000.0
        t0, t1, t2 = self._t
        return t1 - t0, t2 - t1


__all__ = ["StepClock"]
