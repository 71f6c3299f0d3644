"""A float32 target's multi-row passes through oneDNN-packed weights (engine/common/packed_linear.py).

What a user relies on: the verify gets cheap on a CPU without the answer
changing (greedy identical to an unpacked copy's `generate`, whatever draft),
one-token steps run MKL's path as before, nothing of the model's own
(tied heads, state_dict, deep copies, a self-draft built afterwards) notices,
and the packing is named where a verify's price is printed.
"""

from __future__ import annotations

import copy
import platform

import pytest
import torch
from transformers import AutoModelForCausalLM

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent, with_draft
from gammatune_tui.engine.common import packed_linear
from gammatune_tui.engine.common.kernel_path import kernel_path
from gammatune_tui.engine.common.model_weights import weight_bytes
from gammatune_tui.engine.common.packed_linear import PACK_ENV, PackedVerifyLinear, pack_for_verify, packed
from gammatune_tui.engine.loading.models import load_pair
from gammatune_tui.errors import InvalidParameter

from tiny_models import emitted, make_llama

CPU, F32 = torch.device("cpu"), torch.float32
needs_onednn = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="this torch has no oneDNN")


@needs_onednn
def test_few_rows_are_mkls_product_and_many_rows_read_the_packed_copy(monkeypatch):
    torch.manual_seed(0)
    lin = torch.nn.Linear(96, 200)
    p = PackedVerifyLinear(lin)
    calls = []
    real = torch.ops.mkldnn._linear_pointwise
    monkeypatch.setattr(torch.ops.mkldnn, "_linear_pointwise", lambda *a: calls.append(a[0].shape) or real(*a))
    one, three, five = torch.randn(1, 1, 96), torch.randn(1, 3, 96), torch.randn(1, 5, 96)
    with torch.no_grad():
        assert torch.equal(p(one), lin(one))   # the very same kernel a target-only step runs
        assert torch.equal(p(three), lin(three))   # MKL's small-row path is the faster one up to 3 rows
        assert calls == []
        torch.testing.assert_close(p(five), lin(five))   # float32's tolerance: rounding, not a different product
    assert calls == [(5, 96)]
    assert p.weight is lin.weight and p.bias is lin.bias


@needs_onednn
def test_packing_keeps_the_models_own_tensors_ties_and_copies(monkeypatch):
    monkeypatch.setenv(PACK_ENV, "1")
    model = make_llama(64, seed=3)
    model.lm_head.weight = model.model.embed_tokens.weight   # tied, as SmolLM2's head is
    keys = set(model.state_dict())
    done = pack_for_verify(model, CPU, F32)
    assert done is not None and done.layers == sum(isinstance(m, PackedVerifyLinear) for m in model.modules())
    assert model.lm_head.weight is model.model.embed_tokens.weight   # a tied head stays tied
    assert set(model.state_dict()) == keys   # the packed copy is no parameter or buffer
    twin = copy.deepcopy(model)   # an opaque oneDNN tensor cannot be deep-copied: the copies share it
    x = torch.tensor([[3, 4, 5, 6]])
    with torch.no_grad():
        torch.testing.assert_close(twin(x).logits, model(x).logits)


def test_auto_packs_only_float32_models_big_enough_to_stream_and_the_setting_is_checked(monkeypatch):
    model = make_llama(64, seed=3)
    monkeypatch.setenv(PACK_ENV, "auto")
    assert pack_for_verify(model, CPU, F32) is None   # a tiny model sits in cache, where MKL's path wins
    assert pack_for_verify(model, CPU, torch.bfloat16) is None
    monkeypatch.setenv(PACK_ENV, "0")
    monkeypatch.setattr(packed_linear, "MIN_BYTES", 1)
    assert pack_for_verify(model, CPU, F32) is None
    monkeypatch.setenv(PACK_ENV, "auto")
    if torch.backends.mkldnn.is_available() and platform.machine().lower() in ("x86_64", "amd64"):
        assert pack_for_verify(model, CPU, F32) is not None and packed(model)
    monkeypatch.setenv(PACK_ENV, "maybe")
    with pytest.raises(InvalidParameter, match=f"{PACK_ENV} must be auto, 1 or 0, got 'maybe'"):
        pack_for_verify(model, CPU, F32)


@needs_onednn
@pytest.mark.parametrize("draft", ["draft", "self:int4"])
@pytest.mark.parametrize("engine", ["eager", "static"])
def test_a_packed_target_speaks_an_unpacked_copys_greedy_text(tiny_pair_dirs, monkeypatch, draft, engine):
    monkeypatch.setenv(PACK_ENV, "1")
    t_dir, d_dir = tiny_pair_dirs
    pair = load_pair(str(t_dir), draft=str(d_dir) if draft == "draft" else draft, device="cpu", dtype="float32",
                     threads=1, engine=engine, warmup=False)
    assert packed(pair.target) and not any(isinstance(m, PackedVerifyLinear) for m in pair.draft.modules())
    assert kernel_path(pair.dtype, pair.device, pair.target).endswith("MKL sgemm for 1-3 tokens, oneDNN packed from 4")
    copy = sum(m.weight.numel() * 4 for m in pair.target.modules() if isinstance(m, PackedVerifyLinear))
    header = pair.models()["target"]   # the copy is memory the target holds: the header says so and counts it
    assert header["precision"] == "float32, verify packed" and header["bytes"] == weight_bytes(pair.target) + copy
    reference = AutoModelForCausalLM.from_pretrained(t_dir, dtype=torch.float32).eval()
    ids = pair.encode_prompt("def fib(n):\n    return", raw=True)
    x = torch.tensor([ids])
    want = reference.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=40,
                              eos_token_id=list(pair.eos_ids))[0, len(ids):].tolist()
    for method, gamma in (("specdecode", 5), ("gammatune+", 4)):
        evs = list(SpeculativeDecoder(pair, PolicySettings.build(method, gamma), SamplingConfig()).generate(ids, 40))
        assert emitted(evs) == want
        assert max(len(e.drafted) for e in evs if isinstance(e, StepEvent)) > 1   # multi-row verifies ran


@needs_onednn
def test_a_self_draft_built_from_a_packed_target_quantizes_its_layers(tiny_pair_dirs, monkeypatch):
    monkeypatch.setenv(PACK_ENV, "1")
    t_dir, _ = tiny_pair_dirs
    base = load_pair(str(t_dir), drafter="prompt-lookup", device="cpu", dtype="float32", threads=1, warmup=False)
    assert packed(base.target)
    pair = with_draft(base, "self:int4")
    assert not any(isinstance(m, torch.nn.Linear) for m in pair.draft.modules())   # every Linear quantized
    assert packed(pair.target)   # and the target keeps its packed copy
