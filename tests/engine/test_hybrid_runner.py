"""Hybrid and recurrent models (linear attention, Mamba, RG-LRU) decode speculatively and exactly.

Their recurrent and convolution states cannot be cropped, so a rejected window
is rolled back by the hybrid runner (engine/runners/recurrent.py). What a user
would notice: greedy output identical to the model's own `generate` with a
draft model of the same family, a self-draft and prompt lookup (and in mixed
pairs), sampled output that follows the target's law, and a family whose cache
cannot be rewound refused in one line before anything generates.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
import torch

from gammatune_tui.engine.runners import runner_pool
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.loading.models import ModelPair
from gammatune_tui.engine.runners.hybrid_probe import probe
from gammatune_tui.engine.runners.recurrent import HybridRunner
from gammatune_tui.errors import EngineUnavailable, InvalidParameter
from test_sampling import N_SAMPLES, PROMPT_IDS, chi2_test, joint_law
from tiny_models import emitted, greedy_ref, make_byte_tokenizer, make_family, make_llama, noisy_copy

CPU = torch.device("cpu")
PROMPT = [5, 6, 7, 8, 9, 5, 6, 7, 8, 9, 5, 6]   # repeats, so prompt lookup drafts too
FAMILIES = ["qwen3_5_text", "nemotron_h", "falcon_h1", "jamba", "mamba2", "recurrent_gemma", "bamba", "zamba2"]
# their self:int8 draft reads a quantized layer's weight directly (mamba's slow path): refused in one line
NO_INT8 = {"jamba"}


@pytest.fixture(scope="module")
def tok():
    return make_byte_tokenizer()


_MODELS: dict = {}


def family_pair(family: str, tok, draft: str = "noisy", **kw) -> ModelPair:
    """A tiny target of `family` with a draft that agrees often but not always (its output layer perturbed)."""
    if family not in _MODELS:
        target = make_family(family, 0)
        _MODELS[family] = (target, noisy_copy(target, seed=3, scale=0.6))
    target, noisy = _MODELS[family]
    return ModelPair(target=target, draft=noisy if draft == "noisy" else draft, tokenizer=tok, device=CPU,
                     dtype=torch.float32, eos_ids=frozenset({1}), name_target=family, name_draft="d", **kw)


def steps_of(pair, drafter="model", n=20, gamma=4, sampling=None, prompt=PROMPT):
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma), sampling or SamplingConfig(),
                             drafter=drafter)
    return dec, list(dec.generate(prompt, max_new_tokens=n))


@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_output_is_generates_with_every_drafter(family, tok):
    pair = family_pair(family, tok)
    ref = greedy_ref(pair, PROMPT, 20)
    drafters = ["model", "prompt-lookup"] + ([] if family in NO_INT8 else ["self:int8"])
    steps = []
    for drafter in drafters:
        dec, events = steps_of(pair, drafter)
        assert emitted(events) == ref, f"{family} with {drafter}"
        assert events[0].runner.startswith("hybrid")
        steps += [e for e in events if isinstance(e, StepEvent) and e.drafted]
    # windows were cut short, and some after accepted tokens: the state really was rolled back mid-window
    assert any(e.accepted < len(e.drafted) for e in steps)
    assert any(0 < e.accepted < len(e.drafted) for e in steps) or family in NO_INT8
    assert any(e.accepted > 0 for e in steps)


def test_a_self_draft_of_jamba_keeps_what_the_model_reads_and_is_exact(tok):
    """Jamba reads its Mamba layers' dt_proj.weight itself: those stay float (the self-draft's probe finds them),
    and its experts are fused tensors; the int8 copy of the rest runs and the answer is generate's."""
    pair = family_pair("jamba", tok)
    _, events = steps_of(pair, "self:int8")
    assert events[0].draft_precision == "int8, experts+dt_proj kept float32"
    assert emitted(events) == greedy_ref(pair, PROMPT, 20)


@pytest.mark.parametrize("which", ["target", "draft"])
def test_mixed_pairs_of_a_hybrid_and_an_attention_model_are_exact(which, tok):
    hybrid = make_family("qwen3_5_text", 0)
    llama = make_llama(4096, seed=5, hidden=64)
    target, draft = (hybrid, llama) if which == "target" else (llama, hybrid)
    pair = ModelPair(target=target, draft=draft, tokenizer=tok, device=CPU, dtype=torch.float32,
                     eos_ids=frozenset({1}))
    assert "hybrid" in runner_pool(pair).label
    _, events = steps_of(pair)
    assert emitted(events) == greedy_ref(pair, PROMPT, 20)


@pytest.mark.parametrize("family", ["qwen3_5_text", "recurrent_gemma"])
def test_rewinds_leave_the_state_of_the_accepted_prefix(family):
    """Logits after rejected windows (two in a row) equal those of a runner that never saw them."""
    model = make_family(family, 0)
    ids = torch.randint(2, 4096, (1, 16), generator=torch.Generator().manual_seed(4))
    found = probe(model)
    run = HybridRunner(model, per_token=found.per_token)
    run.start(32)
    run.prefill(ids[:, :6])
    run.forward(ids[:, 6:11], 5)          # a window of 5 …
    run.rewind(8)                          # … of which 2 were kept
    assert run.length == 8
    first = run.forward(ids[:, 8:12], 4)
    run.rewind(10)                         # the next window rejected too
    second = run.forward(ids[:, 10:15], 5)
    clean = HybridRunner(model, per_token=True)
    clean.start(32)
    clean.prefill(ids[:, :6])
    want = torch.cat([clean.forward(ids[:, i:i + 1], 1) for i in range(6, 15)])
    torch.testing.assert_close(first, want[2:6], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(second, want[4:9], rtol=1e-4, atol=1e-4)
    assert run.length == 15 and (run.refed > 0) != found.per_token   # one token at a time: a snapshot at each
    torch.testing.assert_close(run.kv(1)[0], clean.kv(1)[0], rtol=1e-4, atol=1e-4)


def test_sampled_output_of_a_hybrid_follows_the_targets_law():
    words = [str(i) for i in range(8)]
    from tiny_models import make_word_tokenizer

    target = make_family("qwen3_5_text", 11, vocab=8, extra={"initializer_range": 0.6})
    draft = noisy_copy(target, seed=12, scale=0.8)
    pair = ModelPair(target=target, draft=draft, tokenizer=make_word_tokenizer(words), device=CPU,
                     dtype=torch.float32, eos_ids=frozenset({-1}))
    cfg = SamplingConfig(temperature=1.0)
    served = Served(cfg)
    p_law, q_law = joint_law(target, served, 8), joint_law(draft, served, 8)
    assert (p_law - q_law).abs().sum() > 0.3   # the draft's law differs: the test can fail
    counts: Counter = Counter()
    rolled = 0
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), dataclasses.replace(cfg, seed=seed))
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                rolled += 0 < ev.accepted < len(ev.drafted)
        counts[out[0] * 8 + out[1]] += 1
    assert rolled > 0
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3
    assert chi2_test(counts, q_law, N_SAMPLES) < 1e-6


def test_a_family_with_a_cache_of_its_own_is_refused_at_load_in_one_line(tok):
    minimax = make_family("minimax", 0)
    pair = ModelPair(target=minimax, draft=None, tokenizer=tok, device=CPU, dtype=torch.float32,
                     eos_ids=frozenset({1}))
    with pytest.raises(InvalidParameter, match=r"^minimax \(MiniMaxForCausalLM\): gammatune cannot") as info:
        runner_pool(pair).label   # resolved by load_pair before warm-up: nothing has generated
    assert "\n" not in str(info.value) and "cache of its own" in str(info.value)


@pytest.mark.parametrize("engine", ["static", "graph-body"])
def test_static_runners_asked_by_name_refuse_a_hybrid_in_one_line(engine, tok):
    pair = family_pair("mamba2", tok, engine=engine)
    with pytest.raises(EngineUnavailable, match="recurrent layers"):
        runner_pool(pair).label


@pytest.mark.parametrize("draft", ["self:int8", "prompt-lookup", "model"])
def test_hf_generate_on_a_hybrid_is_generates_own_output(draft, tok):
    from gammatune_tui.hf import generate

    target, noisy = _MODELS.get("qwen3_5_text") or (family_pair("qwen3_5_text", tok) and _MODELS["qwen3_5_text"])
    ids = torch.tensor([PROMPT])
    want = target.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=16)
    got = generate(target, ids, attention_mask=torch.ones_like(ids), draft_model=noisy if draft == "model" else draft,
                   do_sample=False, max_new_tokens=16, tokenizer=tok)
    assert got.tolist() == want.tolist()
