"""Token ids from the host to the device without a blocking copy.

`torch.tensor(ids, device="cuda")` copies from pageable memory: the host
waits for the copy, once or twice per step. Here the ids are written into a
pinned buffer and copied with `non_blocking=True`, so the host goes on
launching the step. The buffers form a small ring; before one is written
again, the event recorded after its last copy is waited for (long done by
then: every step reads its result back before the next one is prepared).
On the CPU (and MPS) this is plain `torch.tensor`.
"""

from __future__ import annotations

import threading

import torch

RING = 8
_local = threading.local()


class _Ring:
    def __init__(self, device: torch.device):
        self.device = device
        self.slots: list[tuple[torch.Tensor, torch.cuda.Event | None]] = []
        self.next = 0

    def put(self, ids: list[int]) -> torch.Tensor:
        n = len(ids)
        if len(self.slots) < RING:
            self.slots.append((torch.empty(0, dtype=torch.long).pin_memory(), None))
        i = self.next % len(self.slots)
        self.next += 1
        buf, event = self.slots[i]
        if event is not None:
            event.synchronize()
        if buf.numel() < n:
            buf = torch.empty(max(n, 2 * buf.numel(), 64), dtype=torch.long).pin_memory()
        buf[:n] = torch.tensor(ids, dtype=torch.long)
        out = buf[:n].to(self.device, non_blocking=True)
        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream(self.device))
        self.slots[i] = (buf, event)
        return out


def to_device(ids: list[int], device: torch.device) -> torch.Tensor:
    """A (1, n) long tensor of `ids` on `device`; on CUDA through a pinned buffer, without blocking the host."""
    if device.type != "cuda":
        return torch.tensor([ids], dtype=torch.long, device=device)
    rings = getattr(_local, "rings", None)
    if rings is None:
        rings = _local.rings = {}
    ring = rings.get(device)
    if ring is None:
        ring = rings[device] = _Ring(device)
    return ring.put(ids).view(1, -1)


__all__ = ["to_device"]
