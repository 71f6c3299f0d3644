"""The `graphs` runner: the fixed-shape step captured in CUDA graphs, one per (window, length bucket).

On a GPU an eager decode step is host-bound: hundreds of small kernel
launches cost more than the weights take to read. A CUDA graph replays the
whole step with one launch. What makes that possible is the fixed step
(fixed_step.py): fixed shapes for a window of q tokens over a span of key
positions, static input/output buffers, and no value read back to the host.

Which graphs exist is planned, not discovered (plan.py): at `start` — the
warm-up's, and every session's, which in chat is between turns — the runner
captures every (window, span) its role can use under the policy's γ_max, for
every length bucket of its buffers, then replays each new graph against the
uncaptured (eager) step on the same inputs. Nothing is captured mid-answer: a
window the plan did not foresee (γ_max raised during an answer) or a step
after the buffers had to grow runs uncaptured, and is captured at the next
start. All graphs of a pair share one memory pool.

A capture or replay check that fails makes the runner refuse (`strict`, an
explicit `--engine graphs`: EngineUnavailable, one line, exit 2) or turn
itself into a static runner (`auto`) and say why once (`fallback_note`).

With `capture=False` (`graph-body`) the same step runs uncaptured: the code
path the CPU tests use to prove everything here except `torch.cuda.graph`.
Prefills, windows longer than MAX_Q and windows no graph was planned for run
the step uncaptured and uncompiled (`eager_step`), so nothing compiles mid-answer.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Callable, cast

import torch

from ...errors import EngineUnavailable
from ..common.logits_check import compute_dtype, logits_tolerance
from .fixed_step import FixedStep, compile_wanted
from .plan import MAX_Q, plan_captures, span_for
from .static import StaticRunner

GRAPH_BODY = "graph-body"  # the runner's kind when it runs its step uncaptured
log = logging.getLogger("gammatune.engine")

if TYPE_CHECKING:
    from torch.cuda import _POOL_HANDLE as GraphPool   # what torch.cuda.graph_pool_handle() returns
    from transformers import PreTrainedModel

    from .hidden import TargetReads


class GraphRunner(StaticRunner):
    kind = "graphs"

    def __init__(self, model: PreTrainedModel, *, capture: bool, pool: GraphPool | None = None, role: str = "target",
                 strict: bool = False, on_fallback: Callable[[str], None] | None = None,
                 compile: bool | None = None):
        super().__init__(model)
        if capture and self.device.type != "cuda":
            raise ValueError("CUDA graphs need a CUDA device")
        self.capture = capture
        self.kind = "graphs" if capture else GRAPH_BODY
        self.pool = pool
        self.role = role
        self.strict = strict
        self.on_fallback = on_fallback
        # the policy's bound on γ, as each session's `start` (and the warm-up's) passes it: the runner knows no
        # policy; until told, it plans the windows of plain decoding and of a draft (1 and 2 tokens)
        self.gamma_max = 0
        self.graphs: dict[tuple[int, int], torch.cuda.CUDAGraph] = {}  # (window, span) -> graph
        self.missed: set[int] = set()  # windows that ran uncaptured since the last start
        self.uncaptured_steps = 0  # steps that found no graph (tests; the inspector)
        self.captures = 0
        self.capture_s = 0.0  # seconds spent capturing and checking graphs, in all
        self.fallback_note: str | None = None
        self.on_progress: Callable[[int, int], None] | None = None  # (captured, to capture): the loading bar
        self._static = False  # turned into a static runner after a failed capture (auto)
        self._uncaptured = False  # set while prefilling
        self.compile_s = 0.0  # seconds the first compiled call took (compile; later shapes add a little)
        # auto: a captured step on CUDA; GAMMATUNE_COMPILE=1 compiles graph-body's step too; the self-check never
        if compile_wanted(self.device, capture) if compile is None else compile:
            self._fixed = FixedStep(self)
            self._fixed.enable_compile()
        # packed weights: not shape[0]; a head without out_features is a Linear-like module with a weight
        vocab = int(getattr(self.head, "out_features", 0) or cast(torch.Tensor, self.head.weight).shape[0])
        with torch.inference_mode(False), torch.no_grad():
            self._ids = torch.zeros((1, MAX_Q), dtype=torch.long, device=self.device)
            self._pos = torch.zeros((MAX_Q,), dtype=torch.long, device=self.device)
            self._out = torch.zeros((MAX_Q, vocab), dtype=self.dtype, device=self.device)  # the model's own dtype (a quantized head hands it back)

    def _on_allocate(self) -> None:
        self.graphs.clear()  # they point at the old buffers

    def read_target(self, reads: TargetReads | None) -> None:
        """A source that reads the target's hidden rows: its sessions run the static runner's prefix pass (the
        rows are taken by hooks on the model's layers, which the captured step does not call); asked for
        graphs by name, that is one line."""
        super().read_target(reads)
        if self.tapper is not None and self.strict:
            self.tapper = None
            raise EngineUnavailable("--engine graphs: a draft source that reads the target's hidden states "
                                    "runs uncaptured; use --engine static")

    @property
    def _prefix_only(self) -> bool:
        return self._static or self.tapper is not None

    # -- sessions: capture everything planned, before the user waits --------------------------------
    def start(self, capacity: int, gamma_max: int | None = None) -> None:
        super().start(capacity)
        if gamma_max is not None:
            self.gamma_max = int(gamma_max)
        if self.capture and not self._prefix_only:
            try:
                with self.mode():
                    self.prepare()
            except Exception as exc:  # a driver, shape or numerics problem: costs speed, not the session
                self._give_up(str(exc) or type(exc).__name__)

    def prepare(self) -> int:
        """Capture the planned graphs not yet held (cache empty: the warm-up runs write only garbage)."""
        assert self.cache is not None and self._length == 0
        plan = plan_captures(self.role, self.gamma_max, self.cache.capacity, tuple(self.missed))
        todo = [g for g in plan.graphs() if g not in self.graphs]
        if todo and self._fixed is not None and self._fixed.compiled and not self.compile_s:
            t0 = time.perf_counter()  # compile before capturing: its own stage, off the capture's clock
            self.fixed_step(self._ids[:, :1], self._pos[:1].zero_(), todo[0][1])
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for n, (q, span) in enumerate(todo):
            if self.on_progress is not None:
                self.on_progress(n, len(todo))
            self._ids[:, :q].zero_()
            self._pos[:q].copy_(self.cache.key_pos[:q])
            self.graphs[(q, span)] = self._capture(q, span, self._ids[:, :q], self._pos[:q], self._out[:q])
            self.captures += 1
        if todo:
            self.check_graphs(todo)
        self.missed.clear()
        self.capture_s += time.perf_counter() - t0
        return len(todo)

    def check_graphs(self, keys: list[tuple[int, int]]) -> None:
        """Replay each graph against the uncaptured step on the same inputs; raise on a mismatch."""
        assert self.cache is not None
        gen = torch.Generator().manual_seed(1)
        vocab = int(self.model.config.vocab_size)
        precision = torch.bfloat16 if compute_dtype(self.model) == torch.bfloat16 else self._out.dtype
        fp32 = precision == torch.float32
        worst = torch.zeros((), device=self.device)
        for q, span in keys:
            ids = torch.randint(0, vocab, (1, q), generator=gen).to(self.device)
            pos = self.cache.key_pos[span - q:span]  # the far end of the bucket: every key attended
            self._ids[:, :q].copy_(ids)
            self._pos[:q].copy_(pos)
            self.graphs[(q, span)].replay()
            got = self._out[:q].float()
            want = self.eager_step(ids, pos, span).float()
            scale = 1.0 if fp32 else want.abs().max().clamp(min=1.0)
            worst = torch.maximum(worst, ((got - want).abs().max() / scale))
        err = float(worst)  # one read for the whole check
        if not err <= logits_tolerance(precision):
            raise RuntimeError(f"a replayed graph differs from the uncaptured step (max error {err:.3g})")

    def eager_step(self, ids: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        """The step uncaptured and uncompiled: the reference a graph is checked against."""
        assert self.cache is not None
        if self._fixed is None:
            self._fixed = FixedStep(self)
        return self._fixed._body(ids, pos, self.cache.key_pos[:span])

    def _give_up(self, why: str) -> None:
        self.graphs.clear()
        if self.strict:
            raise EngineUnavailable(f"--engine graphs: capturing the step failed on this GPU ({why}); "
                                    "use --engine static")
        self._static = True
        self.kind = "static"
        self.fallback_note = f"graphs → static: capturing the step failed ({why})"
        log.warning("gammatune: %s", self.fallback_note)
        if self.on_fallback is not None:
            self.on_fallback(self.fallback_note)

    # -- forward passes ----------------------------------------------------------------------------
    def prefill(self, ids: torch.Tensor) -> None:
        self._uncaptured = True
        try:
            self.forward(ids, 1)
        finally:
            self._uncaptured = False

    def _step(self, ids: torch.Tensor, start: int, q: int, keep: int) -> torch.Tensor:
        assert self.cache is not None
        if self._prefix_only:
            return self.prefix_step(ids, start, q, keep)
        pos = self.cache.key_pos[start:start + q]
        span = span_for(start + q, self.cache.capacity)
        if q > MAX_Q or self._uncaptured:
            return self.eager_step(ids, pos, span)[q - keep:]
        ids_buf, pos_buf, out_buf = self._ids[:, :q], self._pos[:q], self._out[:q]
        ids_buf.copy_(ids)
        pos_buf.copy_(pos)
        graph = self.graphs.get((q, span)) if self.capture else None
        if graph is not None:
            graph.replay()
        else:
            if self.capture:  # never capture (or compile) mid-answer: this window is captured at the next start
                self.missed.add(q)
                self.uncaptured_steps += 1
                out_buf.copy_(self.eager_step(ids_buf, pos_buf, span))
            else:
                out_buf.copy_(self.fixed_step(ids_buf, pos_buf, span))
        return out_buf[q - keep:].clone()

    def _capture(self, q: int, span: int, ids_buf: torch.Tensor, pos_buf: torch.Tensor,
                 out_buf: torch.Tensor) -> torch.cuda.CUDAGraph:
        """Record the step for windows of q tokens over `span` keys (CUDA only).

        The warm-up runs on a side stream, as torch's docs ask (lazy kernel and
        library initialisation, and compilation, must not happen during capture).
        """
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(2):
                out_buf.copy_(self.fixed_step(ids_buf, pos_buf, span))
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool, capture_error_mode="thread_local"):
            out_buf.copy_(self.fixed_step(ids_buf, pos_buf, span))
        return graph


__all__ = ["GraphRunner", "MAX_Q", "GRAPH_BODY"]
