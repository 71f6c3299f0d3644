"""The load check of a hybrid model: how its windows run so that its output is its own `generate`'s, or why not.

`generate` runs a hybrid model one way: the whole prompt in one pass from an
empty state, then one token at a time. The decoder runs it another: all of
the prompt but its last token, then a window (that token and the drafts) in
one pass over the state, rewound after a rejection (recurrent.py). The two
agree only where the family's multi-token pass over a state and its prefill
are the one-token path up to rounding. Some families' are not, by far more
than rounding and the same in float64: bamba (2.5 at a logit scale of 6),
zamba2 (0.06 at 10.8, enough to change a greedy token at 10 of 32 on a
38-token prompt). Their runner then runs `generate`'s own passes
(`per_token`): their output is `generate`'s token for token, at the price of
one pass per verified token.

The check runs the decoder's passes (prefill, a window, two rewinds) beside
`generate`'s on three prompts of random ids of three lengths, and asks for
agreement at a tolerance relative to the logits' scale, a tenth of the fp32
one: a pass that is subtly wrong on one prompt can land close on another,
and 1e-3 of a logit scale of 10 already lets a real disagreement through.
A model on which neither way reproduces `generate`'s passes after a rewind
is refused in one line.

In half precision the two ways round differently, as every window and step
do, and a hybrid's rounding can pass the half-precision tolerance: a
Qwen3.5-0.8B shape in bf16 differs between the paths by 0.05–0.09 at a
logit scale of 3, half of what bf16 `generate` itself differs from fp32
(0.12–0.18). One pass per token there would cost the whole speed-up for
nothing. So where the model's own check fails in half precision, the
family's math decides: a float32 twin (the same config with its first
layers, a small vocabulary, random weights, on the CPU) is checked at the
fp32 tolerance. If the twin's window is its one-token path, the model's
differences are rounding (within a loose bound), and its windows go in one
pass; zamba2's and bamba's are not, and stay per token.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ...errors import DraftUnusable, InvalidParameter
from ..common.logits_check import FP32_TOL, compute_dtype, logits_close, logits_tolerance
from .base import grad_mode
from .recurrent import HybridRunner, error_line, family

if TYPE_CHECKING:
    from transformers import PreTrainedModel

PROMPTS = ((0, 4), (1, 7), (2, 12))
"""(seed, length) of each probe prompt of random ids: each is followed by a window of four."""


@dataclass(frozen=True)
class Probe:
    """What the self-check found: whether windows go in one pass (else `generate`'s passes), or why nothing works."""

    per_token: bool = False
    refused: str | None = None   # why not, in the model's own words (`refuse` says whose and what to do)
    broken: bool = False         # the model fails a plain forward too: its config, not its state, is at fault


def _runs(model: PreTrainedModel, per_token: bool, ids: torch.Tensor, p: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(generate's rows, the runner's rows) after a prompt of `p` tokens and a window of four over it.

    The runner's passes are the decoder's: a prefill of p - 1 tokens, a window
    (the prompt's last token and three drafts), a rewind into it and a window
    of three, a rewind by one and a single token. Generate's: the p tokens in
    one pass, then one token at a time.
    """
    ref = HybridRunner(model, per_token=True)
    ref.start(p + 8)
    want = [ref.forward(ids[:, :p], 1)] + [ref.forward(ids[:, i:i + 1], 1) for i in range(p, p + 4)]
    runner = HybridRunner(model, per_token=per_token)
    runner.start(p + 8)
    runner.prefill(ids[:, :p - 1])
    got = [runner.forward(ids[:, p - 1:p + 3], 4)]
    runner.rewind(p + 1)
    got.append(runner.forward(ids[:, p + 1:p + 4], 3))
    runner.rewind(p + 2)
    got.append(runner.forward(ids[:, p + 2:p + 3], 1))
    return [torch.cat(want[:4]), torch.cat(want[2:5]), want[3]], got


def _close(want: torch.Tensor, got: torch.Tensor, tol: float) -> bool:
    """Within `tol` of the logits' scale (and relatively): rounding passes, a real disagreement does not."""
    w, g = want.float(), got.float()
    scale = max(1.0, float(w.abs().max()))
    return w.shape == g.shape and bool(torch.allclose(w, g, rtol=tol, atol=tol * scale))


ROUNDING_BOUND = 0.1   # half precision: at most this share of the logits' scale apart, and the twin agrees
TWIN_LAYERS = 4


def _twin_agrees(model: PreTrainedModel) -> bool:
    """Whether the family's window is its one-token path in float32, on a small random twin of `model`'s config
    (see the module docstring); False where no twin can be built or run (the model stays per token)."""
    import copy

    try:
        cfg = copy.deepcopy(model.config)
        n = int(cfg.num_hidden_layers)
        keep = min(n, TWIN_LAYERS)
        for key, val in list(vars(cfg).items()):   # per-layer lists (layer_types, …) follow the cut
            if isinstance(val, (list, tuple)) and len(val) == n:
                setattr(cfg, key, list(val)[:keep])
        cfg.num_hidden_layers = keep
        cfg.vocab_size = min(int(cfg.vocab_size), 512)
        for key in ("pad_token_id", "bos_token_id", "eos_token_id"):
            if isinstance(getattr(cfg, key, None), int) and getattr(cfg, key) >= cfg.vocab_size:
                setattr(cfg, key, None)
        cfg.quantization_config = None
        torch.manual_seed(0)
        with torch.device("cpu"):
            twin = type(model)(cfg).float().eval()
        prompts = [(torch.randint(0, cfg.vocab_size, (1, p + 4), generator=torch.Generator().manual_seed(seed)), p)
                   for seed, p in PROMPTS]
        with torch.no_grad():
            return all(_close(w, g, FP32_TOL / 10) for ids, p in prompts for w, g in zip(*_runs(twin, False, ids, p)))
    except Exception:   # a config that cannot be cut or built: no evidence, so no one-pass windows
        return False


_PROBES: "weakref.WeakKeyDictionary[PreTrainedModel, Probe]" = weakref.WeakKeyDictionary()


def probe(model: PreTrainedModel) -> Probe:
    """Find how this model's windows run exactly (one pass, or generate's passes), or refuse it in one line.
    Once per model."""
    found = _PROBES.get(model)
    if found is None:
        found = _probe(model)
        try:
            _PROBES[model] = found
        except TypeError:  # pragma: no cover - not weak-referenceable
            pass
    return found


def _probe(model: PreTrainedModel) -> Probe:
    vocab = int(model.config.vocab_size)
    device = next(model.parameters()).device
    dtype = compute_dtype(model)
    tight = FP32_TOL / 10 if dtype == torch.float32 else logits_tolerance(dtype)
    prompts = [(torch.randint(0, vocab, (1, p + 4), generator=torch.Generator().manual_seed(seed)).to(device), p)
               for seed, p in PROMPTS]
    try:
        with grad_mode(model)():
            windows = [(w, g) for ids, p in prompts for w, g in zip(*_runs(model, False, ids, p))]
            if all(_close(w, g, tight) for w, g in windows):
                return Probe(per_token=False)
            if dtype != torch.float32 and all(_close(w, g, ROUNDING_BOUND) for w, g in windows) \
                    and _twin_agrees(model):
                return Probe(per_token=False)
            if all(logits_close(w, g, dtype) for ids, p in prompts for w, g in zip(*_runs(model, True, ids, p))):
                return Probe(per_token=True)
        why = "its logits after a rewind differ from its own one-token path"
    except Exception as exc:   # the model's own error, in one line
        return Probe(refused=error_line(exc), broken=not _runs_plainly(model, prompts[0][0]))
    return Probe(refused=why)


def _runs_plainly(model: PreTrainedModel, ids: torch.Tensor) -> bool:
    """Whether one forward without a cache runs at all (a config the family cannot build a working model from
    fails here: zamba2 with 2 Mamba heads of 64 over a 192-wide layer)."""
    try:
        with grad_mode(model)():
            model(input_ids=ids[:, :4], use_cache=False)
    except Exception:
        return False
    return True


def refuse(model: PreTrainedModel, probe_result: Probe, self_draft: str | None = None) -> None:
    """One line for a model the probe refused: its family, or for a self-draft (`self_draft`, its name) the
    quantized copy, which is what failed (the family itself may run)."""
    why = probe_result.refused
    if not why:
        return
    if probe_result.broken:
        raise InvalidParameter(f"{family(model)} ({type(model).__name__}) does not run at all, with or without a "
                               f"cache: its config.json does not fit the family's layers: {why}")
    if self_draft:
        raise DraftUnusable(f"{self_draft} draft of {family(model)}: the quantized copy of this family's layers "
                            f"does not run, so it cannot draft; use another draft: {why}")
    raise InvalidParameter(f"{family(model)} ({type(model).__name__}): gammatune cannot run and rewind this "
                           f"model's recurrent state, so it cannot decode speculatively with it: {why}")


def state_runner(model: PreTrainedModel) -> HybridRunner:
    """A hybrid runner for code that drives one model by hand (trace recording); refused in one line as at load."""
    found = probe(model)
    refuse(model, found)
    return HybridRunner(model, per_token=found.per_token)


__all__ = ["Probe", "probe", "refuse", "state_runner", "PROMPTS"]
