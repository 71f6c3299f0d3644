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
5.24 treat a multi-token input as a prefill from an empty state), and some
prefill a prompt otherwise than a shorter prefill and a step (zamba2, bamba).
The self-check finds them (hybrid_probe.py), and their runner runs exactly
the passes `generate` runs: the whole prompt in one pass (the decoder's
prefill of all but its last token is only noted, and run with that token),
then one token at a time, a snapshot at every position, so their rewinds
never re-feed.
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
from typing import TYPE_CHECKING, Any, Callable, Mapping

import torch

from .base import Runner, grad_mode, layer_kv
from .hf_compat import cache_kw
from .snapshot import Snapshot

if TYPE_CHECKING:
    from transformers import Cache, DynamicCache, PreTrainedModel

MAX_PENDING = 8  # kept tokens left for the next forward's pass at most; more are fed at the rollback
SNAPSHOTS = 24  # snapshots kept: a draft's whole window with room to spare; an older rewind re-feeds from empty


def own_cache(model: PreTrainedModel) -> DynamicCache:
    """The cache the model builds for itself in `forward` and `generate`: a DynamicCache laid out by its config."""
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def _stateful(layer: object) -> bool:
    return isinstance(getattr(layer, "conv_states", None), dict) or isinstance(getattr(layer, "recurrent_states", None), dict)


def has_recurrent_state(model: PreTrainedModel) -> bool:
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


def family(model: PreTrainedModel) -> str:
    return str(getattr(getattr(model, "config", None), "model_type", None) or type(model).__name__)


def module_states(model: PreTrainedModel) -> list[tuple[torch.nn.Module, str]]:
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


_LOCKS: "weakref.WeakKeyDictionary[PreTrainedModel, threading.Lock]" = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def _module_lock(model: PreTrainedModel) -> threading.Lock:
    with _LOCKS_GUARD:
        lock = _LOCKS.get(model)
        if lock is None:
            lock = _LOCKS[model] = threading.Lock()
        return lock


def _model_forward(model: PreTrainedModel) -> Callable[[torch.Tensor, Cache, int, int], torch.Tensor]:
    """fwd(ids, cache, keep, start) -> the last `keep` rows of logits, through the model's own forward.

    The positions go in as `generate` gives them (`start` …): left to itself,
    bamba numbers a one-token step's position from 0 whatever the cache holds,
    and its answer left `generate`'s at the second token."""
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    trims = "logits_to_keep" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    positions = "position_ids" in params

    def fwd(ids: torch.Tensor, cache: Cache, keep: int, start: int) -> torch.Tensor:
        extra: dict[str, Any] = {"logits_to_keep": keep} if trims else {}
        if positions:
            extra["position_ids"] = torch.arange(start, start + int(ids.shape[1]), device=ids.device)[None]
        logits = model(input_ids=ids, **cache_kw(model, cache), use_cache=True, **extra).logits[0]
        return logits[-keep:]

    return fwd


class HybridRunner(Runner):
    """The model's own cache, rewound by snapshot and re-feed; `per_token` feeds windows one token at a time."""

    kind = "hybrid"

    def __init__(self, model: PreTrainedModel, per_token: bool = False):
        super().__init__(model)
        self.per_token = per_token
        self.mode = grad_mode(model)
        self._fwd = _model_forward(model)
        self.cache = own_cache(model)
        self._slots = module_states(model)
        self._blank = {i: getattr(m, n) for i, (m, n) in enumerate(self._slots)}   # what the modules held at first
        self._mods: dict[int, torch.Tensor | None] = dict(self._blank)   # this runner's module states
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
            out = self._fwd(ids, self.cache, keep, self._length)
        else:
            with _module_lock(self.model):
                out = self._swapped(ids, keep)
        self._length += int(ids.shape[1])
        return out

    def _swapped(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        for i, (module, name) in enumerate(self._slots):
            setattr(module, name, self._mods[i])
        try:
            out = self._fwd(ids, self.cache, keep, self._length)
        finally:
            for i, (module, name) in enumerate(self._slots):
                self._mods[i] = getattr(module, name)
                setattr(module, name, self._blank[i])
        return out

    def prefill(self, ids: torch.Tensor) -> None:
        """Cache a prompt; one token at a time, only noted: `generate` prefills the whole prompt in one pass,
        and these families' pass over n-1 tokens and a step is not that pass, so the next forward runs it."""
        if not self.per_token:
            return super().prefill(ids)
        self._hist = torch.cat([self._hist, ids.to(self._hist.device)], 1)

    def _feed(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        """Run `ids` over the cache (the state after `_length` tokens)."""
        q = int(ids.shape[1])
        if not self.per_token or q == 1:
            return self._pass(ids, keep)
        first = 0
        if self._length == 0:   # from empty, as `generate`: one pass up to the first row asked for, then steps
            first = q - keep + 1
            rows = [self._pass(ids[:, :first], 1)]
        else:
            rows = []
        rows += [self._pass(ids[:, i:i + 1], 1) for i in range(first, q)]
        return torch.cat(rows[len(rows) - keep:], 0)

    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        pending = self._hist[:, self._length:]
        self._hist = torch.cat([self._hist, ids.to(self._hist.device)], 1)
        fed = torch.cat([pending, ids], 1) if pending.shape[1] else ids
        with self.mode():   # the kept tokens of the last rollback go in the same pass, ahead of the new ones
            if self.tapper is None:
                return self._feed(fed, keep)
            # the caller's positions only, not the re-fed ones; but a prompt whose prefill waited for this pass
            # (per_token, from empty) is read here: the decoder hands its rows over now (decoder.py)
            deferred = self.per_token and self._length == 0
            with self.tapper.pass_of(int((fed if deferred else ids).shape[1])):
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
        return layer_kv(self.cache.layers[layer])


def session_cache(model: PreTrainedModel) -> DynamicCache:
    """A fresh cache for a model driven by hand one token at a time: its own for a hybrid, else a DynamicCache
    (a multi-token pass is sound over it only from empty: a prefill)."""
    from transformers import DynamicCache

    return own_cache(model) if has_recurrent_state(model) else DynamicCache()


__all__ = ["HybridRunner", "Snapshot", "own_cache", "has_recurrent_state", "family", "error_line",
           "SNAPSHOTS", "MAX_PENDING", "module_states", "session_cache"]
