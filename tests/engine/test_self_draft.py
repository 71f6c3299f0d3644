"""Self-drafts (`--draft self:int4|self:int8|self:bf16`): the target's own weights, quantized in memory, as the draft.

What a user relies on: the answer is exactly the target's (greedy identical to
`target.generate`, sampled in the target's law at T 0.7), on every runner;
the draft is built without files and shares the embedding; its size and
precision are reported; and what cannot work is one clear line.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gammatune_tui.engine.runners import runner_pool
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.loading.models import ModelPair, load_pair
from gammatune_tui.engine.common.model_weights import weight_bytes
from gammatune_tui.engine.drafting.quantized import WeightOnlyLinear
from gammatune_tui.engine.drafting.self_draft import build_self_draft, parse_self_draft
from gammatune_tui.errors import InvalidParameter

from test_sampling import N_SAMPLES, chi2_test, joint_law, sample_pairs
from tiny_models import emitted, greedy_ref
from gammatune_tui.engine.common.sampling import Served

PROMPT = "def fib(n):\n    return"


@pytest.fixture(scope="module")
def self_pairs(tiny_pair_dirs):
    t, _ = tiny_pair_dirs
    return {k: load_pair(str(t), draft=k, device="cpu", dtype="float32", threads=1, engine="eager", warmup=False)
            for k in ("self:int4", "self:int8", "self:bf16")}


@pytest.mark.parametrize("kind", ["self:int4", "self:int8", "self:bf16"])
@pytest.mark.parametrize("engine", ["eager", "static", "graph-body"])
@pytest.mark.parametrize("method", ["specdecode", "gammatune+"])
def test_greedy_with_a_self_draft_is_the_targets_own_greedy_text(self_pairs, kind, engine, method):
    pair = dataclasses.replace(self_pairs[kind], engine=engine)
    assert runner_pool(pair).label == engine   # the quantized draft passes its runner's self-check (against itself)
    ids = pair.encode_prompt(PROMPT, raw=True)
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, 4), SamplingConfig())
    evs = list(dec.generate(ids, max_new_tokens=40))
    assert emitted(evs) == greedy_ref(pair, ids, 40)
    assert evs[0].draft == kind
    assert evs[-1].accepted > 0   # the copy agrees with the target, so it drafts something useful


def test_the_draft_is_built_in_memory_and_shares_what_it_does_not_quantize(self_pairs):
    pair = self_pairs["self:int4"]
    target, draft = pair.target, pair.draft
    assert draft.model.embed_tokens.weight is target.model.embed_tokens.weight   # shared, not copied
    assert draft.model.norm.weight is target.model.norm.weight
    linears = [m for m in draft.modules() if isinstance(m, torch.nn.Linear)]
    assert linears == []   # every Linear, lm_head included, is weight-only quantized
    assert isinstance(draft.lm_head, WeightOnlyLinear)
    assert all(isinstance(m, torch.nn.Linear) for m in (target.lm_head, target.model.layers[0].mlp.up_proj))
    info = pair.models()
    assert info["target"] == {"precision": "float32", "bytes": weight_bytes(target)}
    assert info["draft"]["precision"] == "int4 g32"
    # the draft adds its packed Linear weights only: well under the target's float32 bytes
    assert 0 < info["draft"]["bytes"] <= 0.35 * info["target"]["bytes"]
    assert pair.load_s.get("self-draft", 0) > 0


def test_a_pair_without_a_draft_model_switches_to_a_self_draft(tiny_pair):
    """`SpeculativeDecoder(pair, drafter="self:int8")`: built once, kept, and exact."""
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    dec = SpeculativeDecoder(tiny_pair, PolicySettings.build("specdecode", 3), SamplingConfig(), drafter="self:int8")
    evs = list(dec.generate(ids, max_new_tokens=30))
    assert evs[0].draft == "self:int8" and evs[0].draft_precision == "int8"
    assert emitted(evs) == greedy_ref(tiny_pair, ids, 30)
    again = SpeculativeDecoder(tiny_pair, PolicySettings.build("specdecode", 3), SamplingConfig(), drafter="self:int8")
    assert again.pair is dec.pair   # the same sibling pair: not quantized twice


def test_a_self_draft_is_the_pairs_draft_and_its_record_is_the_pairs_not_the_modules(tiny_pair):
    """The pair that decodes holds the quantized copy as its draft and says which it is; the module carries nothing."""
    from gammatune_tui.engine.decoder import SpeculativeDecoder as StepDecoder

    dec = SpeculativeDecoder(tiny_pair, PolicySettings.build("specdecode", 3), SamplingConfig(), drafter="self:int4")
    own = dec.pair.self_draft
    assert (own.name, own.precision) == ("self:int4", "int4 g32") and own.build_s > 0
    assert dec.pair.load_s["self-draft"] == own.build_s and tiny_pair.self_draft is None
    assert any(isinstance(m, WeightOnlyLinear) for m in dec.pair.draft.modules())
    assert [k for k in vars(dec.pair.draft) if k.startswith("gammatune_")] == []
    # the step decoder drafts with the pair it is given: a self-draft the pair does not hold is one line
    with pytest.raises(InvalidParameter, match="self:int4 is a draft model this pair does not hold"):
        StepDecoder(tiny_pair, PolicySettings.build("specdecode", 3), SamplingConfig(), drafter="self:int4")
    assert StepDecoder(dec.pair, drafter="self:int4").pair is dec.pair


def test_header_names_each_models_precision_and_size(self_pairs):
    pair = self_pairs["self:int4"]
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig())
    head = next(iter(dec.generate(PROMPT, max_new_tokens=2)))
    assert (head.dtype, head.target_precision, head.draft_precision) == ("float32", "float32", "int4 g32")
    assert head.target_bytes == weight_bytes(pair.target) and 0 < head.draft_bytes < head.target_bytes
    from gammatune_tui.engine.events import event_from_json
    again = event_from_json(head.to_json())
    assert again == head and again.draft_precision == "int4 g32" and again.draft_bytes == head.draft_bytes


@pytest.mark.parametrize("engine", ["eager", "static"])
def test_sampled_output_with_a_self_draft_follows_the_target_law(micro_pair, engine):
    """T 0.7: the int4 copy's law differs from the target's, the served law does not."""
    cfg = SamplingConfig(temperature=0.7)
    draft, own = build_self_draft(micro_pair.target, "self:int4")
    pair = ModelPair(target=micro_pair.target, draft=draft, tokenizer=micro_pair.tokenizer,
                     device=torch.device("cpu"), dtype=torch.float32, name_target="micro-target",
                     name_draft="self:int4", eos_ids=frozenset({-1}), engine=engine, self_draft=own)
    vocab = micro_pair.target.config.vocab_size
    served = Served(cfg)
    p_law = joint_law(micro_pair.target, served, vocab)
    q_law = joint_law(draft, served, vocab)
    assert (p_law - q_law).abs().sum() > 0.01   # the draft is not the target
    counts, bonus = sample_pairs(pair, PolicySettings.build("specdecode", 3), cfg, N_SAMPLES)
    assert bonus > 0
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3


def test_int4_layers_of_any_shape_compute_the_dequantized_product():
    """Odd output sizes (a 259-token vocabulary) and inputs that are not a whole group are padded, not refused."""
    torch.manual_seed(0)
    for n, k in ((259, 32), (7, 40), (64, 96)):
        lin = torch.nn.Linear(k, n, bias=True)
        q = WeightOnlyLinear(lin, "int4", 32)
        x = torch.randn(3, k)
        want = lin(x)
        got = q(x)
        assert got.shape == want.shape and got.dtype == x.dtype
        assert (got - want).abs().max() < 0.1 * want.abs().max()


@pytest.mark.parametrize("text, canonical", [("self:int4", "self:int4"), ("SELF:INT8", "self:int8"),
                                             ("self:int4:g64", "self:int4:g64"), ("self:int4:32", "self:int4"),
                                             ("self:bf16", "self:bf16")])
def test_names(text, canonical):
    assert parse_self_draft(text).name == canonical


@pytest.mark.parametrize("text, words", [("self:int3", "unknown self-draft"), ("self:int4:g48", "groups must be"),
                                         ("self:int8:g32", "unknown self-draft"), ("self:", "unknown self-draft")])
def test_bad_names_are_one_line(text, words):
    with pytest.raises(InvalidParameter, match=words):
        parse_self_draft(text)


def test_what_cannot_help_is_refused(tiny_pair_dirs):
    t, _ = tiny_pair_dirs
    with pytest.raises(InvalidParameter, match="would be the target itself"):
        load_pair(str(t), draft="self:bf16", device="cpu", dtype="bfloat16", warmup=False)
    with pytest.raises(InvalidParameter, match="prompt-lookup drafts without"):
        load_pair(str(t), draft="self:int4", drafter="prompt-lookup", device="cpu", warmup=False)
    with pytest.raises(InvalidParameter, match="sets its own precision"):
        load_pair(str(t), draft="self:int4", draft_dtype="bfloat16", device="cpu", warmup=False)


def test_a_missing_kernel_names_what_would_work(monkeypatch):
    from gammatune_tui.engine.drafting import quantized

    monkeypatch.setattr(quantized, "_has_kernel", lambda op, key: "int4" not in op)
    with pytest.raises(quantized.QuantizationUnavailable, match=r"no _convert_weight_to_int4pack_for_cpu kernel for "
                                                                r"cpu; self:int8, self:bf16 can run here"):
        WeightOnlyLinear(torch.nn.Linear(32, 32), "int4")


def test_a_draft_model_at_its_own_dtype(tiny_pair_dirs):
    """`--draft-dtype bfloat16`: a bf16 draft beside a float32 target; the answer is the float32 target's."""
    t, d = tiny_pair_dirs
    pair = load_pair(str(t), str(d), device="cpu", dtype="float32", draft_dtype="bfloat16", warmup=False)
    assert pair.target.dtype == torch.float32 and pair.draft.dtype == torch.bfloat16
    assert pair.models()["draft"]["precision"] == "bfloat16"
    ids = pair.encode_prompt(PROMPT, raw=True)
    evs = list(SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig()).generate(ids, max_new_tokens=30))
    assert emitted(evs) == greedy_ref(pair, ids, 30)


@pytest.mark.parametrize("kind", ["int8", "int4"])
def test_layers_of_any_width_and_strided_inputs_compute_the_dequantized_product(kind):
    """The CPU int8 kernel reads input columns 16 at a time (a 2-wide Linear crashed the process, 40 gave NaN),
    and both kernels need a dense input (RecurrentGemma hands its Linears a strided view)."""
    torch.manual_seed(0)
    for n, k in ((4, 2), (4, 17), (4, 40), (8, 24)):
        lin = torch.nn.Linear(k, n)
        q = WeightOnlyLinear(lin, kind)
        x = torch.randn(k, 5).t()   # a transposed view: not contiguous
        want, got = lin(x), q(x)
        assert torch.isfinite(got).all()
        assert (got - want).abs().max() < 0.1 * want.abs().max()
