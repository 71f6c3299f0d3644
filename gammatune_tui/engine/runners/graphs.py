"""The `graphs` runner: the static cache's fixed-shape step, captured once per window length in a CUDA graph.

On a GPU an eager decode step is host-bound: hundreds of small kernel
launches cost more than the weights take to read. A CUDA graph replays the
whole step with one launch. What makes that possible is `fixed_step`
(static.py): fixed shapes for a window of q tokens (attention over all
`capacity` keys behind a position mask), static input/output buffers, and no
value read back to the host inside it.

This runner feeds every window through that one function and the same static
buffers. With `capture=True` (CUDA) it records one graph per window length q
the first time q is used (warm-up uses 1, 2 for the draft and 1 … γ_max+1 for
the target) and replays it from then on; all graphs of a pair share one memory
pool. With `capture=False` it calls the function directly: the same code path
on any device, which is how the CPU tests prove everything here except
`torch.cuda.graph` itself. Growing the buffers (a chat longer than the
captured capacity) drops the graphs; each is captured again on next use.

Prefills (one prompt length, run once) and windows longer than `MAX_Q` run
the same function uncaptured.
"""

from __future__ import annotations

from typing import Any

import torch

from .static import StaticRunner

MAX_Q = 64  # windows up to this many tokens get a graph; longer ones (rare) run uncaptured
GRAPH_BODY = "graph-body"  # the runner's kind when it runs its step uncaptured


class GraphRunner(StaticRunner):
    kind = "graphs"

    def __init__(self, model: Any, *, capture: bool, pool: Any = None):
        super().__init__(model)
        if capture and self.device.type != "cuda":
            raise ValueError("CUDA graphs need a CUDA device")
        self.capture = capture
        self.kind = "graphs" if capture else GRAPH_BODY
        self.pool = pool
        self.graphs: dict[int, Any] = {}
        self._uncaptured = False  # set while prefilling
        vocab = int(self.head.weight.shape[0])
        with torch.inference_mode(False), torch.no_grad():
            self._ids = torch.zeros((1, MAX_Q), dtype=torch.long, device=self.device)
            self._pos = torch.zeros((MAX_Q,), dtype=torch.long, device=self.device)
            self._out = torch.zeros((MAX_Q, vocab), dtype=self.head.weight.dtype, device=self.device)

    def _on_allocate(self) -> None:
        self.graphs.clear()  # they point at the old buffers

    def prefill(self, ids: torch.Tensor) -> None:
        self._uncaptured = True
        try:
            self.forward(ids, 1)
        finally:
            self._uncaptured = False

    def _step(self, ids: torch.Tensor, start: int, q: int, keep: int) -> torch.Tensor:
        assert self.cache is not None
        pos = self.cache.key_pos[start:start + q]
        if q > MAX_Q or self._uncaptured:
            return self.fixed_step(ids, pos)[q - keep:]
        ids_buf, pos_buf, out_buf = self._ids[:, :q], self._pos[:q], self._out[:q]
        ids_buf.copy_(ids)
        pos_buf.copy_(pos)
        if not self.capture:
            out_buf.copy_(self.fixed_step(ids_buf, pos_buf))
        else:
            graph = self.graphs.get(q)
            if graph is None:
                graph = self._capture(q, ids_buf, pos_buf, out_buf)
            graph.replay()
        return out_buf[q - keep:].clone()

    def _capture(self, q: int, ids_buf: torch.Tensor, pos_buf: torch.Tensor, out_buf: torch.Tensor) -> Any:
        """Record the step for windows of q tokens (CUDA only).

        The warm-up runs on a side stream, as torch's docs ask (lazy kernel and
        library initialisation must not happen during capture). It computes the
        real window: the keys and values it writes are the ones the replay
        writes again, so running it changes nothing.
        """
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(2):
                out_buf.copy_(self.fixed_step(ids_buf, pos_buf))
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool, capture_error_mode="thread_local"):
            out_buf.copy_(self.fixed_step(ids_buf, pos_buf))
        self.graphs[q] = graph
        return graph


__all__ = ["GraphRunner", "MAX_Q", "GRAPH_BODY"]
