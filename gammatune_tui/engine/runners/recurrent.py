"""The `hybrid` runner: models with recurrent state (linear attention, Mamba, RG-LRU) rewound exactly.

A hybrid model's cache holds, beside attention keys and values, the
convolution and recurrent states of its linear-attention / state-space
layers: a fixed size per layer, overwritten in place at every token, so they
cannot be cropped the way keys are. This runner keeps the model's own cache
(`DynamicCache(config=...)`, what the model and `generate` build for these
families in transformers 5.17 and 5.24) and makes every rewind exact by
snapshots:

* before each forward pass it takes a snapshot of the cache: the recurrent
  and convolution tensors are cloned (a fixed size, small beside the
  weights one pass reads), the attention layers' key/value tensors are only
  referenced (transformers replaces them at each update instead of writing
  into them, so the reference *is* the cropped cache);
* `rewind(n)` restores the latest snapshot taken at a length <= n; the
  tokens between that length and n (the accepted ones) are fed again, not
  in a pass of their own but ahead of the next window in the next forward,
  whose logits for them are simply not returned. On a CPU, where a pass
  costs about what reading the weights costs, a few more tokens in a pass
  that runs anyway cost far less than a pass (docs/benchmarks-hybrid.md).
  A full acceptance needs nothing; a rewind to a snapshot's own length
  feeds nothing; kept tokens piling up over several rollbacks in a row
  (more than MAX_PENDING) are fed at once.

Some families' multi-token forward over an existing state is not the one-token
path `generate` takes (mamba, falcon_mamba and recurrent_gemma in transformers
5.24 treat a multi-token input as a prefill from an empty state). The
self-check finds them (`probe`), and their runner feeds a window one token
at a time: a snapshot at every position, so their rewinds never re-feed.
A few families keep their state on their modules instead of in the cache
(recurrent_gemma's `conv1d_state` and `recurrent_states`); the runner keeps
those as its own, puts them on the modules for each of its passes and
takes them back after, so they are snapshotted alike and two runners of one
model (concurrent sessions, the self-check) never share them.
A model whose cache this runner cannot rewind (a family with a cache class of
its own) fails the check and is refused at load, in one line.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Mapping

import torch

from ...errors import InvalidParameter
from ..common.logits_check import FP32_TOL, HALF_TOL, compute_dtype, logits_close, logits_tolerance
from .base import Forward, Runner, grad_mode
from .hf_compat import cache_kw
from .snapshot import Snapshot

MAX_PENDING = 8  # kept tokens left for the next forward's pass at most; more are fed at the rollback
SNAPSHOTS = 24  # snapshots kept: a draft's whole window with room to spare; an older rewind re-feeds from empty


def own_cache(model: Any) -> Any:
    """The cache the model builds for itself in `forward` and `generate`: a DynamicCache laid out by its config."""
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def _stateful(layer: Any) -> bool:
    return isinstance(getattr(layer, "conv_states", None), dict) or isinstance(getattr(layer, "recurrent_states", None), dict)


def has_recurrent_state(model: Any) -> bool:
    """Whether the model's cache has layers with recurrent or convolution states (which cannot be cropped)."""
    cfg = getattr(model, "config", None)
    if cfg is None:
        return False
    if module_states(model):   # state kept on the modules (recurrent_gemma)
        return True
    try:
        cache = own_cache(model)
    except Exception:  # a config DynamicCache cannot lay out: not one of the hybrid families
        return False
    return any(_stateful(layer) for layer in getattr(cache, "layers", ()))


def error_line(exc: BaseException) -> str:
    """A model's own error as one line (its first), for a refusal at load."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def family(model: Any) -> str:
    return str(getattr(getattr(model, "config", None), "model_type", None) or type(model).__name__)


def module_states(model: Any) -> list[tuple[Any, str]]:
    """(module, attribute) of every state a module keeps on itself: a plain tensor attribute (or None until the
    first pass) named for a state, neither parameter nor buffer."""
    found = []
    for module in model.modules():
        for name, value in vars(module).items():
            if name.startswith("_") or "state" not in name.lower():
                continue
            if value is None or (isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)):
                found.append((module, name))
    return found


_LOCKS: "weakref.WeakKeyDictionary[Any, threading.Lock]" = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def _module_lock(model: Any) -> threading.Lock:
    with _LOCKS_GUARD:
        lock = _LOCKS.get(model)
        if lock is None:
            lock = _LOCKS[model] = threading.Lock()
        return lock


def _model_forward(model: Any) -> Forward:
    """fwd(ids, cache, keep) -> the last `keep` rows of logits, through the model's own forward."""
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    trims = "logits_to_keep" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def fwd(ids: torch.Tensor, cache: Any, keep: int) -> torch.Tensor:
        extra = {"logits_to_keep": keep} if trims else {}
        logits = model(input_ids=ids, **cache_kw(model, cache), use_cache=True, **extra).logits[0]
        return logits[-keep:]

    return fwd


class HybridRunner(Runner):
    """The model's own cache, rewound by snapshot and re-feed; `per_token` feeds windows one token at a time."""

    kind = "hybrid"

    def __init__(self, model: Any, per_token: bool = False):
        super().__init__(model)
        self.per_token = per_token
        self.mode = grad_mode(model)
        self._fwd = _model_forward(model)
        self.cache = own_cache(model)
        self._slots = module_states(model)
        self._blank = {i: getattr(m, n) for i, (m, n) in enumerate(self._slots)}   # what the modules held at first
        self._mods: dict[int, Any] = dict(self._blank)   # this runner's module states
        self._length = 0
        self._hist = torch.zeros((1, 0), dtype=torch.long, device=self.device)
        self._snaps: deque[Snapshot] = deque(maxlen=SNAPSHOTS)
        self.refed = 0  # tokens fed again by rewinds (tests, the rollback benchmark)

    @property
    def length(self) -> int:
        return int(self._hist.shape[1])   # what the caller sees: fed, plus the kept tokens waiting to be fed again

    def start(self, capacity: int, gamma_max: int | None = None) -> None:
        self.cache = own_cache(self.model)
        self._mods = dict(self._blank)
        self._length = 0
        self._hist = torch.zeros((1, 0), dtype=torch.long, device=self.device)
        self._snaps = deque(maxlen=max(SNAPSHOTS, 2 * (gamma_max or 0) + 4))

    def _pass(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        """One forward after a snapshot, with this runner's module states on the modules for its duration
        (under the model's lock: two sessions of one model may run in two threads)."""
        self._snaps.append(Snapshot(self.cache, self._length, self._mods))
        if not self._slots:
            out = self._fwd(ids, self.cache, keep)
        else:
            with _module_lock(self.model):
                out = self._swapped(ids, keep)
        self._length += int(ids.shape[1])
        return out

    def _swapped(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        for i, (module, name) in enumerate(self._slots):
            setattr(module, name, self._mods[i])
        try:
            out = self._fwd(ids, self.cache, keep)
        finally:
            for i, (module, name) in enumerate(self._slots):
                self._mods[i] = getattr(module, name)
                setattr(module, name, self._blank[i])
        return out

    def _feed(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        """Run `ids` over the cache (the state after `_length` tokens)."""
        q = int(ids.shape[1])
        if not self.per_token or self._length == 0 or q == 1:
            # from an empty state a multi-token pass is the prefill `generate` itself runs
            return self._pass(ids, keep)
        rows = [self._pass(ids[:, i:i + 1], 1) for i in range(q)]
        return torch.cat(rows[q - keep:], 0)

    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        pending = self._hist[:, self._length:]
        self._hist = torch.cat([self._hist, ids.to(self._hist.device)], 1)
        fed = torch.cat([pending, ids], 1) if pending.shape[1] else ids
        with self.mode():   # the kept tokens of the last rollback go in the same pass, ahead of the new ones
            if self.tapper is None:
                return self._feed(fed, keep)
            with self.tapper.pass_of(int(ids.shape[1])):   # the caller's positions only, not the re-fed ones
                return self._feed(fed, keep)

    def rewind(self, length: int) -> None:
        self._check_rewind(length)
        self._hist = self._hist[:, :length]
        if length >= self._length:   # only tokens not yet fed are forgotten
            return
        while self._snaps and self._snaps[-1].length > length:
            self._snaps.pop()
        with self.mode():
            if self._snaps:
                snap = self._snaps[-1]
                snap.restore(self.cache, self._mods)
                self._length = snap.length
            else:   # older than every snapshot: the state is rebuilt from the empty cache
                self.cache = own_cache(self.model)
                self._mods = dict(self._blank)
                self._length = 0
            todo = length - self._length
            self.refed += todo
            # the kept tokens wait for the next forward, which feeds them in its own pass; fed now only where
            # that pass could not take them (one token at a time) or they have piled up over several rollbacks
            if todo and (self.per_token or self._length == 0 or todo > MAX_PENDING):
                self._feed(self._hist[:, self._length:], 1)

    def flush(self) -> None:
        """Feed the kept tokens still waiting (inspection needs the cache whole)."""
        if self._length < self.length:
            with self.mode():
                self._feed(self._hist[:, self._length:], 1)

    def kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        self.flush()
        lay = self.cache.layers[layer]
        return lay.keys, lay.values


@dataclass(frozen=True)
class Probe:
    """What the self-check found: whether windows go in one pass (else per token), or why nothing works."""

    per_token: bool = False
    refused: str | None = None   # why not, in the model's own words (`refuse` says whose and what to do)


def _check(model: Any, per_token: bool, ids: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The runner's logits over a prompt, a window, a rewind by two and a single token, beside the
    one-token path's (prefill, then one token at a time: what `generate` runs)."""
    runner = HybridRunner(model, per_token=per_token)
    runner.start(16)
    got = [runner.forward(ids[:, :4], 1), runner.forward(ids[:, 4:8], 4)]
    runner.rewind(6)
    got.append(runner.forward(ids[:, 6:8], 2))
    runner.rewind(5)   # inside the window, after a rewind: a snapshot before the last forward
    got.append(runner.forward(ids[:, 5:6], 1))
    ref = HybridRunner(model, per_token=True)
    ref.start(16)
    want = [ref.forward(ids[:, :4], 1)]
    steps = [ref.forward(ids[:, i:i + 1], 1) for i in range(4, 8)]
    want += [torch.cat(steps, 0), torch.cat(steps[2:], 0), steps[1]]
    return want, got


_PROBES: "weakref.WeakKeyDictionary[Any, Probe]" = weakref.WeakKeyDictionary()


def probe(model: Any) -> Probe:
    """Find how this model's windows run exactly (one pass, or one token at a time), or refuse it in one line.
    Once per model."""
    found = _PROBES.get(model)
    if found is None:
        found = _probe(model)
        try:
            _PROBES[model] = found
        except TypeError:  # pragma: no cover - not weak-referenceable
            pass
    return found


def _probe(model: Any) -> Probe:
    vocab = int(model.config.vocab_size)
    device = next(model.parameters()).device
    ids = torch.randint(0, vocab, (1, 8), generator=torch.Generator().manual_seed(0)).to(device)
    dtype = compute_dtype(model)
    # one pass must match the one-token path far inside the tolerance: a chunked path over a state that is
    # subtly wrong (it ignores part of the state) still lands near it on random weights
    tight = FP32_TOL / 10 if dtype == torch.float32 else logits_tolerance(dtype)
    try:
        with grad_mode(model)():
            want, got = _check(model, False, ids)
            whole = _prefill(model, ids)
        if not _close(want[1][-1:], whole, HALF_TOL):   # a gross disagreement, not an fp32 rounding (zamba2: 1e-4)
            raise _Inconsistent("its own prefill of a prompt and its one-token path after a shorter prefill give "
                                "different logits, so no decoder can match its `generate`")
        if all(_close(w, g, tight) for w, g in zip(want, got)):
            return Probe(per_token=False)
        with grad_mode(model)():
            want, got = _check(model, True, ids)
        if all(logits_close(w, g, dtype) for w, g in zip(want, got)):
            return Probe(per_token=True)
        why = "its logits after a rewind differ from its own one-token path"
    except Exception as exc:   # the model's own error, in one line
        why = error_line(exc)
    return Probe(refused=why)


class _Inconsistent(Exception):
    """The model disagrees with itself: its one-pass prefill is not its one-token path."""


def _prefill(model: Any, ids: torch.Tensor) -> torch.Tensor:
    """The last position's logits of one prefill pass over `ids` from an empty state, as `generate` starts."""
    runner = HybridRunner(model, per_token=False)
    runner.start(16)
    return runner.forward(ids, 1)


def _close(want: torch.Tensor, got: torch.Tensor, tol: float) -> bool:
    w, g = want.float(), got.float()
    scale = max(1.0, float(w.abs().max()))
    return w.shape == g.shape and bool(torch.allclose(w, g, rtol=tol, atol=tol * scale))


def refuse(model: Any, probe_result: Probe, self_draft: str | None = None) -> None:
    """One line for a model the probe refused: its family, or for a self-draft (`self_draft`, its name) the
    quantized copy, which is what failed (the family itself may run)."""
    why = probe_result.refused
    if not why:
        return
    if self_draft:
        raise InvalidParameter(f"{self_draft} draft of {family(model)}: the quantized copy of this family's layers "
                               f"does not run, so it cannot draft; use another draft: {why}")
    raise InvalidParameter(f"{family(model)} ({type(model).__name__}): gammatune cannot run and rewind this "
                           f"model's recurrent state, so it cannot decode speculatively with it: {why}")


def state_runner(model: Any) -> HybridRunner:
    """A hybrid runner for code that drives one model by hand (trace recording); refused in one line as at load."""
    found = probe(model)
    refuse(model, found)
    return HybridRunner(model, per_token=found.per_token)


def session_cache(model: Any) -> Any:
    """A fresh cache for a model driven by hand one token at a time: its own for a hybrid, else a DynamicCache
    (a multi-token pass is sound over it only from empty: a prefill)."""
    from transformers import DynamicCache

    return own_cache(model) if has_recurrent_state(model) else DynamicCache()


__all__ = ["HybridRunner", "Snapshot", "Probe", "probe", "refuse", "own_cache", "has_recurrent_state", "family",
           "SNAPSHOTS", "MAX_PENDING", "module_states", "state_runner", "session_cache"]
