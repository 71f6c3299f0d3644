"""Which runner a pair gets (`--engine`), and a pool that lends a session its warmed-up runners.

`auto` picks the fastest runner that is exact for the pair on its device:
graphs on CUDA for Llama/Qwen2 stacks, static on a CPU (measured faster than
eager on the demo pair, docs/benchmarks.md), eager everywhere else and for any
other architecture; models with recurrent state (linear attention, Mamba) get
the hybrid runner (recurrent.py), under `auto` and `eager` alike, and are
refused at load in one line when it cannot rewind them. A runner asked for by name that cannot run here is a
one-line `EngineUnavailable`, never a silent fallback.

Before a static or graphs runner is trusted with a model, its step is checked
against the model's own forward on a few random tokens (with a rewind in
between); a model on which it disagrees gets eager under `auto` and an error
when the runner was asked for by name.

Runners hold the KV buffers and the captured graphs, so they are kept on the
pair and lent to one session at a time (`RunnerPool.acquire`): warm-up
captures graphs into the same runners the first session then uses, and the
sessions of `compare` or a chat reuse them. Two sessions running at once on
one pair get separate runners.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

import torch
from transformers import DynamicCache

from ..common.pair import ModelPair
from ...errors import EngineUnavailable, InvalidParameter
from .fast_forward import _direct_eligible
from .base import Runner, grad_mode
from .eager import EagerRunner
from .graphs import GRAPH_BODY, GraphRunner
from .static import StaticRunner
from .recurrent import HybridRunner, error_line, family, has_recurrent_state
from .hybrid_probe import Probe, probe, refuse
from .hf_compat import cache_kw
from ..common.logits_check import compute_dtype, logits_close
from ..common.model_weights import quanto_quantized
from ..common.names import ENGINES  # declared without torch, for the command line

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from .graphs import GraphPool

# GRAPH_BODY ("graph-body"): the graphs runner's step run without capture, on any device;
# what the tests use to check that step on a CPU. Accepted by the Python API, not by the CLI.

# auto on a device without CUDA graphs; measured on the demo pair (docs/benchmarks.md).
# MPS is unmeasured: it keeps the long-standing eager path.
AUTO_WITHOUT_GRAPHS = {"cpu": "static", "cuda": "static"}


def check_engine(engine: object, *, internal: bool = True) -> str:
    allowed = ENGINES + ((GRAPH_BODY,) if internal else ())
    if engine not in allowed:
        raise InvalidParameter(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    return str(engine)


def check_engine_device(engine: str, device: torch.device) -> None:
    """What can be refused before any model is loaded: graphs without a CUDA device."""
    if engine == "graphs" and device.type != "cuda":
        raise EngineUnavailable(f"--engine graphs: CUDA graphs need a CUDA device; this pair is on {device.type}")


# rope variants whose table is fixed at load time; the others (dynamic, longrope) recompute it from the
# positions seen, on the host, which the static runners' steps do not do
STATIC_ROPE = ("default", "linear", "llama3", "yarn")


def rope_type(model: PreTrainedModel) -> str:
    return str(getattr(getattr(getattr(model, "model", None), "rotary_emb", None), "rope_type", "default"))


def static_unsupported(model: PreTrainedModel) -> str | None:
    """Why the static runners cannot run this model, or None."""
    if not _direct_eligible(model):
        arch = type(model).__name__
        return (f"{arch} is not supported by the static runners (Llama and Qwen2 stacks with sdpa or eager "
                "attention, no sliding window, on one device)")
    rope = rope_type(model)
    if rope not in STATIC_ROPE:
        return (f"rope scaling {rope!r} recomputes its table from the positions seen, which the static runners "
                f"do not (they run {', '.join(STATIC_ROPE)})")
    return None


def graphs_unsupported(model: PreTrainedModel, device: torch.device) -> str | None:
    if device.type != "cuda":
        return f"CUDA graphs need a CUDA device; this pair is on {device.type}"  # as check_engine_device says
    if quanto_quantized(model):
        return "quantized weights are not captured in CUDA graphs; use --engine static"
    return None


def choose_kind(engine: str, model: PreTrainedModel, device: torch.device) -> str:
    """The runner kind for one model (before its self-check)."""
    if has_recurrent_state(model):
        # recurrent and convolution states cannot be cropped: only the hybrid runner rewinds them (recurrent.py);
        # eager names the model's own forward, which is what it runs
        if engine in ("static", "graphs", GRAPH_BODY):
            raise EngineUnavailable(f"--engine {engine}: {type(model).__name__} has recurrent layers, which only "
                                    "the eager (hybrid) runner rewinds; use --engine auto or eager")
        return "hybrid"
    if engine == "eager":
        return "eager"
    why = static_unsupported(model)
    if engine in ("static", GRAPH_BODY):
        if why:
            raise EngineUnavailable(f"--engine {engine}: {why}")
        return engine
    if engine == "graphs":
        why = why or graphs_unsupported(model, device)
        if why:
            raise EngineUnavailable(f"--engine graphs: {why}")
        return "graphs"
    if why:
        return "eager"
    if device.type == "cuda" and graphs_unsupported(model, device) is None:
        return "graphs"
    return AUTO_WITHOUT_GRAPHS.get(device.type, "eager")


def build_runner(kind: str, model: PreTrainedModel, graph_pool: GraphPool | None = None, *, role: str = "target",
                 strict: bool = False, on_fallback: Callable[[str], None] | None = None,
                 per_token: bool = False) -> Runner:
    if kind == "hybrid":
        return HybridRunner(model, per_token=per_token)
    if kind == "eager":
        return EagerRunner(model)
    if kind == "static":
        return StaticRunner(model)
    if kind == "graphs":
        return GraphRunner(model, capture=True, pool=graph_pool, role=role, strict=strict, on_fallback=on_fallback)
    if kind == GRAPH_BODY:
        return GraphRunner(model, capture=False, role=role)
    raise ValueError(f"unknown runner kind {kind!r}")


def self_check(kind: str, model: PreTrainedModel) -> bool:
    """The runner's step (uncaptured) gives the model's own logits.

    Kept cheap (it runs at every load): one forward of the model over 7 random
    tokens, and three runner passes that cover each window class — a prompt of
    4, a window of 3 over it, a rewind by two and a single token over them.
    Captured graphs are checked against this step when they are captured (graphs.py).
    A quantized draft is checked against its own forward at the tolerance of the
    bfloat16 it computes in (logits_check.compute_dtype), never against the target.
    """
    runner = GraphRunner(model, capture=False, compile=False) if kind in ("graphs", GRAPH_BODY) else StaticRunner(model)
    device = runner.device
    vocab = int(model.config.vocab_size)
    ids = torch.randint(0, vocab, (1, 7), generator=torch.Generator().manual_seed(0)).to(device)
    try:
        with runner.mode():
            full = model(input_ids=ids, use_cache=False).logits[0]
            want = [full[3:4], full[4:7], full[5:6]]
            runner.start(16)
            got = [runner.forward(ids[:, :4], 1)]  # a prompt
            got.append(runner.forward(ids[:, 4:7], 3))  # a window over it
            runner.rewind(5)  # its last two tokens rejected
            got.append(runner.forward(ids[:, 5:6], 1))  # a single token written over them
    except Exception:  # any surprise: this runner is not for this model
        return False
    return all(logits_close(w, g, compute_dtype(model)) for w, g in zip(want, got))


def eager_refusal(model: PreTrainedModel) -> str | None:
    """Why the eager runner cannot run and rewind this model (a prompt, a window, a rewind, a token), or None.

    A family whose forward wants a cache class of its own fails here at load,
    in one line, instead of with a traceback in the middle of an answer.
    """
    runner = EagerRunner(model)
    ids = torch.randint(0, int(model.config.vocab_size), (1, 6), generator=torch.Generator().manual_seed(0))
    ids = ids.to(runner.device)
    try:
        with grad_mode(model)():
            runner.start(16)
            runner.forward(ids[:, :4], 1)
            if runner.length != 4:   # its forward keeps its context elsewhere (RWKV's `state`): nothing to rewind
                raise RuntimeError("its forward does not keep the prompt in the transformers cache it is given")
            runner.forward(ids[:, 4:6], 2)
            runner.rewind(5)
            runner.forward(ids[:, 5:6], 1)
    except Exception as exc:  # the model's own error, in one line
        return (f"{family(model)} ({type(model).__name__}): gammatune cannot run and rewind this model's cache, "
                f"so it cannot decode speculatively with it: {type(exc).__name__}: {error_line(exc)}")
    return None


@dataclass
class RunnerSet:
    """The target's and the draft's runner for one session (no draft runner for a pair without a draft model)."""

    target: Runner
    draft: Runner | None

    @property
    def label(self) -> str:
        t = self.target.kind
        d = self.draft.kind if self.draft is not None else t
        return t if t == d else f"{t}/{d}"

    def __iter__(self) -> Iterator[Runner]:
        return iter(r for r in (self.target, self.draft) if r is not None)


class RunnerPool:
    """Lends each session a RunnerSet; the first call resolves `engine` for both models (`draft` may be None).

    `timings` holds what resolving and preparing the runners cost, in seconds
    (`self_check_s`; warm-up adds `compile_s`, `capture_s`, `warmup_s`), for
    the loader's stages. `fallback_note` is the one line saying why a graphs
    runner became static under `auto` (None when none did).
    """

    def __init__(self, target: PreTrainedModel, draft: PreTrainedModel | None, engine: str = "auto", *,
                 self_draft: str | None = None):
        self.target, self.draft = target, draft
        self.self_draft = self_draft   # the draft is this self-draft of the target: its refusals say so
        self.engine = check_engine(engine)
        self._kinds: tuple[str, str] | None = None
        self._free: list[RunnerSet] = []
        self._lock = threading.Lock()
        self._graph_pool: GraphPool | None = None
        self.timings: dict[str, float] = {}
        self.fallback_note: str | None = None
        self._probes: dict[int, Probe] = {}   # hybrid models: how their windows run (hybrid_probe.probe)

    def kinds(self) -> tuple[str, str]:
        """(target kind, draft kind); raises EngineUnavailable for a runner that cannot run here.

        Without a draft model the draft's kind reads as the target's."""
        if self._kinds is None:
            t0 = time.perf_counter()
            out = []
            for model in (self.target,) if self.draft is None else (self.target, self.draft):
                device = next(model.parameters()).device
                kind = choose_kind(self.engine, model, device)
                if kind == "hybrid":
                    found = probe(model)
                    # a cache it cannot rewind: one line at load, before any generation
                    refuse(model, found, self.self_draft if model is self.draft else None)
                    self._probes[id(model)] = found
                elif kind == "eager":
                    why = eager_refusal(model)
                    if why:   # a cache of its own the eager runner cannot drive: one line at load
                        raise InvalidParameter(why)
                elif not self_check(kind, model):
                    if self.engine != "auto":
                        raise EngineUnavailable(
                            f"--engine {self.engine}: its step does not reproduce {type(model).__name__}'s own "
                            "logits on this model; use --engine eager")
                    kind = "static" if kind == "graphs" and self_check("static", model) else "eager"
                out.append(kind)
            self._kinds = (out[0], out[-1])
            self.timings["self_check_s"] = time.perf_counter() - t0
        return self._kinds

    @property
    def label(self) -> str:
        t, d = self.kinds()
        return t if t == d else f"{t}/{d}"

    def _fell_back(self, role: str, note: str) -> None:
        """A graphs runner turned static (auto): later sessions get static runners for that model."""
        with self._lock:
            t, d = self.kinds()
            self._kinds = ("static", d) if role == "target" else (t, "static")
            self.fallback_note = note

    def acquire(self) -> RunnerSet:
        with self._lock:
            if self._free:
                return self._free.pop()
        t, d = self.kinds()
        if "graphs" in (t, d) and self._graph_pool is None:
            self._graph_pool = torch.cuda.graph_pool_handle()  # one pool for every graph of this pair
        strict = self.engine == "graphs"

        def build(kind: str, model: PreTrainedModel, role: str) -> Runner:
            found = self._probes.get(id(model), Probe())
            return build_runner(kind, model, self._graph_pool, role=role, strict=strict,
                                on_fallback=lambda note: self._fell_back(role, note), per_token=found.per_token)

        draft = build(d, self.draft, "draft") if self.draft is not None else None
        return RunnerSet(build(t, self.target, "target"), draft)

    def release(self, runners: RunnerSet) -> None:
        with self._lock:
            self._free.append(runners)


_POOL_LOCK = threading.Lock()


def runner_pool(pair: ModelPair) -> RunnerPool:
    """The pair's pool: made on first use (the pair type sits below the runners), then kept on the pair."""
    with _POOL_LOCK:   # two sessions starting at once (compare's contestants) share one pool
        pool = pair.runner_pool
        if pool is None:
            pool = pair.runner_pool = RunnerPool(pair.target, pair.draft, pair.engine,
                                                 self_draft=pair.self_draft.name if pair.self_draft is not None else None)
        assert isinstance(pool, RunnerPool)   # the field holds only the pool made here (common/ cannot name it)
        return pool


__all__ = [
    "ENGINES", "GRAPH_BODY", "AUTO_WITHOUT_GRAPHS", "check_engine", "check_engine_device", "choose_kind", "build_runner", "self_check",
    "static_unsupported", "graphs_unsupported", "RunnerSet", "RunnerPool", "runner_pool",
]
