"""Self-drafts of models whose layers are not all plain Linears: fused experts, routers, weights read directly.

What a user relies on: `--draft self:int8` / `self:int4` on a mixture-of-experts
model (Phi-MoE, Llama 4: a router that subclasses nn.Linear, experts held as
3-D tensors) decodes exactly the target's greedy text, and the header says
what stayed at the target's precision; a family that reads a Linear's weight
itself (Mamba's dt_proj) gets a working draft, not a shape error.
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.drafting.quantized import WeightOnlyLinear
from gammatune_tui.engine.drafting.self_draft import build_self_draft
from gammatune_tui.engine.loading.families import tiny_model
from gammatune_tui.engine.loading.models import ModelPair

from tiny_models import emitted, greedy_ref

IDS = [0, 17, 93, 402, 17, 93, 402, 17, 93]


@pytest.mark.parametrize("family", ["phimoe", "llama4_text"])
@pytest.mark.parametrize("kind", ["self:int8", "self:int4"])
def test_a_self_draft_of_a_moe_model_is_exact_and_says_the_experts_stay(family, kind):
    from transformers import PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models

    target = tiny_model(family, seed=1)
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<s>": 0, "</s>": 1}, unk_token="<s>")))
    pair = ModelPair(target=target, draft=None, tokenizer=tok, device=torch.device("cpu"), dtype=torch.float32,
                     eos_ids=frozenset({1}))
    events = list(SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig(),
                                     drafter=kind).generate(IDS, max_new_tokens=12))
    assert emitted(events) == greedy_ref(pair, IDS, 12)
    fmt = "int8" if kind == "self:int8" else "int4 g32"
    assert events[0].draft_precision == f"{fmt}, experts kept float32"


def test_linears_a_family_reads_itself_stay_at_the_targets_precision():
    target = tiny_model("mamba", seed=1)
    draft, own = build_self_draft(target, "self:int8")
    # Mamba multiplies by dt_proj.weight in its scan and casts its input to lm_head.weight.dtype
    assert own.precision == "int8, dt_proj+lm_head kept float32"
    mixer = draft.backbone.layers[0].mixer
    assert isinstance(mixer.in_proj, WeightOnlyLinear) and isinstance(mixer.out_proj, WeightOnlyLinear)
    assert type(mixer.dt_proj) is torch.nn.Linear and type(draft.lm_head) is torch.nn.Linear
    x = torch.tensor([IDS])
    with torch.no_grad():
        want, got = target(x).logits, draft(x).logits
    assert (got - want).abs().max() < 0.05 * want.abs().max()


def test_a_model_that_reads_every_weight_itself_is_refused_not_copied_whole():
    """A self-draft that could quantize nothing would be the target run twice: one line says so instead."""
    from tiny_models import make_llama
    from gammatune_tui.errors import InvalidParameter

    model = make_llama(64, seed=1)

    def read_every_weight(module, args):
        for m in module.modules():
            getattr(m, "weight", None)

    model.register_forward_pre_hook(read_every_weight)
    with pytest.raises(InvalidParameter, match="none can be quantized") as info:
        build_self_draft(model, "self:int8")
    assert "\n" not in str(info.value)
