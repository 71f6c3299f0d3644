"""An MTP head built on the target: transformers' own `MtpModel`, its own KV cache, chained past its depth.

The head is transformers' `MtpModel` (modeling_layers.py) — its layers are
built from the target's own last decoder-layer class and norm, and it shares
the target's embeddings, LM head and rotary embedding — loaded with the
tensors mtp_layouts.py reads out of the checkpoint. Families whose config has
no `num_mtp_layers` (Qwen3.5, Qwen3.5-MoE, Qwen3-Next: transformers runs no
MTP for them) get it here on a copy of the config, with the head's layer a
full-attention one, as vLLM's `qwen3_next_mtp.py` builds it.

Rows. The head reads, for target position t, the target's hidden state h_t
(`feed`: after the final norm or before it, mtp_layouts.DEFAULT_FEED) and the
embedding of the token at t + 1, at position t + 1, and predicts the token at
t + 2 — transformers' MTPCandidateGenerator's shift. Its KV cache (an
`MtpCache`, which offsets the head's positions by one) holds one entry per
row, so rewinding with the target is cropping to the target's kept rows.

Chaining. One draft token per head pass: the first from the last accepted
row, each next one from the head's own output hidden state and the token it
just drafted, one position on — the same layer again (vLLM's and llama.cpp's
`num_speculative_tokens` > layers), so γ is the policy's choice, not the
head's depth. The chained rows are speculative: the next `keep` crops them.
A head with several layers chains its first; its other depths are loaded and
checked but not run (none of the families' released heads but MiMo-V2 has
more than one).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import torch

from ...errors import ModelLoadError
from .frspec import DraftVocab, check_size, ranked_subset, vocab_width
from .mtp_layouts import HeadTensors, text_config_of

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel
    from transformers.modeling_layers import MtpModel


class _Main:
    """What `MtpModel` reads of its main model, with the MTP fields a config without them needs."""

    def __init__(self, target: PreTrainedModel, config: PretrainedConfig):
        self.config = config
        self._target = target
        self.lm_head = target.lm_head
        self._weight_conversions: list[Any] = []

    def get_decoder(self) -> Any:
        return self._target.get_decoder()

    def get_input_embeddings(self) -> Any:
        return self._target.get_input_embeddings()


def _mtp_config(target: PreTrainedModel, layers: int) -> PretrainedConfig:
    """A copy of the target's text config that `MtpModel` can build `layers` head layers from."""
    cfg = copy.deepcopy(text_config_of(target.config))
    if getattr(cfg, "num_mtp_layers", None) in (None, 0):
        cfg.num_mtp_layers = layers
    if getattr(cfg, "layer_types", None) is not None and getattr(cfg, "mtp_layer_types", None) is None:
        cfg.mtp_layer_types = ["full_attention"] * cfg.num_mtp_layers   # Qwen3.5/Next: a full-attention head
    if getattr(cfg, "mlp_layer_types", None) is not None and getattr(cfg, "mtp_mlp_layer_types", None) is None:
        cfg.mtp_mlp_layer_types = ["sparse"] * cfg.num_mtp_layers
    cfg._attn_implementation = getattr(target.config, "_attn_implementation", None) or "sdpa"
    return cfg


class MtpHead:
    """One session's MTP head over a loaded target: `keep` the rows the target kept, `extend` new rows,
    `logits` of the last one; `length` rows cached (see the module docstring)."""

    def __init__(self, target: PreTrainedModel, head: HeadTensors):
        from transformers.cache_utils import MtpCache
        from transformers.modeling_layers import MtpModel

        if not hasattr(MtpModel, "forward_layer"):   # older transformers (5.17) build MTP layers but run none alone
            import transformers

            raise ModelLoadError("--draft mtp needs a transformers whose MtpModel runs one head layer at a time (5.24 "
                                 f"does; installed: {transformers.__version__})")
        main = _Main(target, _mtp_config(target, head.layers))
        param = next(target.parameters())
        try:
            # Any: it reads only what _Main has; and transformers' wrapped `.to` below has no type mypy can call
            model: Any = MtpModel(main, head.layers)  # type: ignore[arg-type]
        except (ValueError, AttributeError, TypeError) as exc:
            raise ModelLoadError(f"cannot build this family's MTP head ({str(exc).splitlines()[0]})") from None
        own = {k for k in model.state_dict() if k.startswith("layers.")}
        missing = sorted(own - set(head.tensors))
        extra = sorted(set(head.tensors) - own)
        if missing or extra:
            what = f"missing {missing[0]}" if missing else f"unexpected {extra[0]}"
            raise ModelLoadError(f"{head.folder}: its MTP head does not fit this target "
                                 f"({what}; {len(missing)} missing, {len(extra)} unexpected)")
        for name, tensor in head.tensors.items():
            want = model.state_dict()[name].shape
            if tuple(tensor.shape) != tuple(want):
                raise ModelLoadError(f"{head.folder}: MTP tensor {name} has shape {tuple(tensor.shape)}, "
                                     f"the target's head needs {tuple(want)}")
        model.load_state_dict(head.tensors, strict=False)   # the embeddings and LM head are the target's own
        self.model: MtpModel = model.to(device=param.device, dtype=param.dtype).eval()
        self.layers = head.layers
        self.layout = head.layout
        self._cache_type = MtpCache
        self.cache: MtpCache   # made by reset(), below, and at every session's start
        self._vocabs: dict[tuple[int, ...], DraftVocab] = {}
        self.reset()

    def draft_vocab(self, n: int, first: tuple[int, ...] = ()) -> DraftVocab:
        """The reduced draft vocabulary of `n` tokens (frspec.py), its rows sliced once per subset and kept
        with the head (every session of the loaded target reuses them)."""
        width = vocab_width(self.model)
        check_size(n, width)
        key = (n, *first)
        if key not in self._vocabs:
            self._vocabs[key] = DraftVocab(self.model, ranked_subset(n, width, first))
        return self._vocabs[key]

    def reset(self) -> None:
        self.cache = self._cache_type(config=self.model.config)
        self.cache.activate_past_recording()   # a sliding-window head layer (Mellum) can still be cropped

    @property
    def length(self) -> int:
        """Rows cached: the head has run rows 0 … length − 1 (positions 1 … length)."""
        return int(self.cache.get_seq_length(0))

    def keep(self, rows: int) -> None:
        """Forget every row at or past `rows` (a rejected window's, the chained drafts')."""
        extra = self.length - rows
        if extra > 0:
            self.cache.crop(-extra)

    @torch.inference_mode()
    def extend(self, hidden: torch.Tensor, next_ids: list[int]) -> torch.Tensor:
        """Run rows length … length + q − 1: `hidden` (q, H) the states of those positions, `next_ids` the q
        tokens that follow each; the head's output hidden states (q, H), the last one feeds a chained step."""
        start = self.length
        q = len(next_ids)
        dev = next(self.model.parameters()).device
        ids = torch.tensor([next_ids], device=dev)
        pos = torch.arange(start + 1, start + 1 + q, device=dev).unsqueeze(0)
        h = hidden.to(device=dev, dtype=next(self.model.parameters()).dtype).unsqueeze(0)
        return self.model.forward_layer(0, h, pos, self.cache, input_ids=ids)[0]

    @torch.inference_mode()
    def logits(self, out: torch.Tensor) -> torch.Tensor:
        """The head's logits (V,) over the target's vocabulary from one output row (H,)."""
        return self.model._project_to_logits(out.view(1, 1, -1))[0, 0].float()
