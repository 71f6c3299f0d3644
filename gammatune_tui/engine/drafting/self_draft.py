"""A draft for every model: the target's own weights at 4 or 8 bits, or in bfloat16 (`--draft self:int4`).

A draft must share the target's tokenizer, and most models have no small
sibling that does; a quantized copy of the target always does, and agrees
with it most of the time (SmolLM2-135M: greedy agreement 0.91 at int4, 0.96
at int8, with a one-token step 2.9× and 1.9× cheaper on a CPU; docs/drafting.md).

The copy is built at load, in memory, from the target's weights as loaded (no
file is written, a second or two): every plain `nn.Linear` (lm_head
included) becomes a `WeightOnlyLinear` (quantized.py); everything else — the
embedding, the norms, the rotary table — is the target's own tensors,
shared, not copied. Three kinds of layer stay at the target's precision, and
the draft's precision says so ("int8, experts kept bfloat16"): experts a
mixture-of-experts model holds as fused 3-D tensors rather than Linears
(Mixtral, Qwen3-MoE, Llama 4 … in transformers 5), Linear subclasses with a
forward of their own (Llama 4's and Phi-MoE's routers), and Linears whose
weight the model reads instead of calling them (Mamba's dt_proj and lm_head). Exactness never depends on the draft: the target, as
loaded, decides every token, so greedy output stays identical to
`target.generate` and the sampled law stays the target's.

Names: `self:int4` (groups of 32), `self:int4:gN` (N in 32, 64, 128, 256),
`self:int8`, `self:bf16`.
"""

from __future__ import annotations

import copy
import itertools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import torch
from torch import nn

from ...errors import DraftUnusable, InvalidParameter
from ..common.names import MODEL_FREE, SELF_FORMATS, SELF_PREFIX, is_self_draft
from ..common.model_weights import quanto_quantized
from ..common.pair import SelfDraft
from ..common.packed_linear import PackedVerifyLinear
from .quantized import DEFAULT_GROUP, INT4_GROUPS, WeightOnlyLinear

if TYPE_CHECKING:
    from transformers import PreTrainedModel


@dataclass(frozen=True)
class SelfDraftSpec:
    """What `self:…` asks for: a weight format and, for int4, the group size."""

    kind: str
    group: int = DEFAULT_GROUP

    @property
    def name(self) -> str:
        """The canonical `--draft` value (`self:int4`, `self:int4:g64`, `self:int8`, `self:bf16`)."""
        tail = f":g{self.group}" if self.kind == "int4" and self.group != DEFAULT_GROUP else ""
        return f"{SELF_PREFIX}{self.kind}{tail}"

    @property
    def precision(self) -> str:
        """How the draft's weights are stored, in words (activations are bfloat16 inside each matmul)."""
        return f"int4 g{self.group}" if self.kind == "int4" else ("bfloat16" if self.kind == "bf16" else "int8")


def parse_self_draft(text: str) -> SelfDraftSpec:
    """`self:int4`, `self:int4:g64`, `self:int8`, `self:bf16` → a spec; anything else one clear line."""
    raw = str(text).strip().lower()
    want = f"expected {', '.join(SELF_PREFIX + f for f in SELF_FORMATS)} or self:int4:gN (N in " \
           f"{', '.join(map(str, INT4_GROUPS))})"
    if not is_self_draft(raw):
        raise InvalidParameter(f"{text!r} is not a self-draft; {want}")
    parts = raw[len(SELF_PREFIX):].split(":")
    kind = parts[0]
    if kind not in SELF_FORMATS or len(parts) > 2 or (len(parts) == 2 and kind != "int4"):
        raise InvalidParameter(f"unknown self-draft {text!r}; {want}")
    group = DEFAULT_GROUP
    if len(parts) == 2:
        g = parts[1][1:] if parts[1].startswith("g") else parts[1]
        if not g.isdigit() or int(g) not in INT4_GROUPS:
            raise InvalidParameter(f"self-draft {text!r}: int4 groups must be one of "
                                   f"{', '.join(map(str, INT4_GROUPS))} (e.g. self:int4:g64)")
        group = int(g)
    return SelfDraftSpec(kind, group)


def build_self_draft(target: PreTrainedModel, spec: SelfDraftSpec | str) -> tuple[PreTrainedModel, SelfDraft]:
    """A weight-only quantized copy of `target` sharing its other tensors, and the record a pair keeps of it
    (its name, its precision in words, its build time: common/pair.py `SelfDraft`).

    Refused in one line (InvalidParameter) where it cannot help or cannot run:
    a target already quantized with optimum-quanto, `self:bf16` of a target that
    is bfloat16 already, a kernel missing on the target's device, a layer
    whose shape the int4 kernel cannot take.
    """
    if isinstance(spec, str):
        spec = parse_self_draft(spec)
    t0 = time.perf_counter()
    if quanto_quantized(target):
        raise InvalidParameter(f"--draft {spec.name} quantizes the target's own weights, but --quantize already "
                               "replaced them (optimum-quanto): leave out --quantize")
    dtype = next(target.parameters()).dtype
    if spec.kind == "bf16" and dtype == torch.bfloat16:
        raise DraftUnusable("--draft self:bf16 would be the target itself (it is bfloat16 already): "
                               "use self:int8 or self:int4, or load the target with --dtype float32")
    shared = {id(t): t for t in itertools.chain(target.parameters(), target.buffers())}
    draft = copy.deepcopy(target, memo=shared)   # the module tree is new; every tensor is the target's
    swapped: list[tuple[nn.Module, str, nn.Linear, WeightOnlyLinear]] = []
    with torch.no_grad():
        for module in list(draft.modules()):
            for name, child in list(module.named_children()):
                # a subclass (Llama 4's router) has a forward of its own; a packed copy's is nn.Linear's own
                if type(child) in (nn.Linear, PackedVerifyLinear) and isinstance(child, nn.Linear):
                    q = WeightOnlyLinear(child, spec.kind, spec.group)
                    setattr(module, name, q)
                    swapped.append((module, name, child, q))
    draft.eval()
    try:
        kept = _restore_layers_read_directly(draft, swapped)
    except Exception as e:   # a family whose forward the quantized layers break: one line, not a traceback
        raise DraftUnusable(f"--draft {spec.name}: this model does not run with its layers quantized "
                               f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}); "
                               f"draft with a model or with {' or '.join(MODEL_FREE)}") from None
    if not any(isinstance(m, WeightOnlyLinear) for m in draft.modules()):
        raise DraftUnusable(f"--draft {spec.name}: this model reads every Linear layer's weight itself, so none "
                               "can be quantized and the copy would be the target; draft with a model or with "
                               + " or ".join(MODEL_FREE))
    return draft, SelfDraft(spec.name, spec.precision + _kept_note(target, kept, dtype), time.perf_counter() - t0)


def _restore_layers_read_directly(draft: PreTrainedModel, swapped: list) -> set[str]:
    """Put back the float Linears whose weight a forward pass reads rather than calls; their names.

    A family may read a layer's `.weight` itself: Mamba multiplies by
    `dt_proj.weight` in its scan and casts its input to `lm_head.weight.dtype`.
    A quantized layer answers such a read correctly but by dequantizing the
    whole matrix each time, so those layers stay at the target's precision.
    One forward of a few tokens finds them, whatever the family.
    """
    vocab = cast("torch.nn.Embedding", draft.get_input_embeddings()).num_embeddings   # a causal LM's token table
    device = next(draft.parameters()).device
    with torch.no_grad():
        draft(input_ids=(torch.arange(2, 10, device=device) % vocab)[None])
    kept = set()
    for module, name, original, q in swapped:
        if q.weight_reads:
            setattr(module, name, original)
            kept.add(name)
    return kept


def _kept_note(target: PreTrainedModel, kept: set[str], dtype: torch.dtype) -> str:
    """What stays at the target's precision, for the header: fused experts (3-D weights no Linear holds), and
    Linears the model reads directly (", experts+dt_proj kept float32"); "" when everything was quantized."""
    what = []
    if any(p.dim() >= 2 and "expert" in type(m).__name__.lower()
           for m in target.modules() for p in m.parameters(recurse=False)):
        what.append("experts")
    what += sorted(kept)[:3]
    return f", {'+'.join(what)} kept {str(dtype).replace('torch.', '')}" if what else ""


__all__ = ["SelfDraftSpec", "parse_self_draft", "build_self_draft"]
