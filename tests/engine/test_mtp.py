"""`--draft mtp`: the MTP head shipped in the target's checkpoint drafts (engine/drafting/mtp*.py).

What a user would notice: the head is read in each family's own layout
(Qwen3.5-text hybrid, Mellum, DeepSeek-V3) from a real safetensors folder;
decoding with it is exact (greedy is `generate`'s, sampled follows the
target's law, on the hybrid too, where the target's recurrent rollback and
the head's cache rewind together); its drafts are transformers' own
`MTPCandidateGenerator`'s at its fixed γ; a checkpoint without a head, or a
family without heads, gets one line.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.pair import ModelPair
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
from gammatune_tui.engine.drafting.mtp import load_head
from gammatune_tui.engine.drafting.mtp_layouts import read_head
from gammatune_tui.errors import ModelLoadError
from test_sampling import N_SAMPLES, PROMPT_IDS, chi2_test, joint_law
from tiny_models import emitted, greedy_ref, make_byte_tokenizer, make_llama, make_word_tokenizer
from tiny_mtp import FAMILIES, runs_heads, write_mtp_checkpoint

CPU = torch.device("cpu")
PROMPT = [0, 72, 101, 108, 108, 111, 44, 32, 72, 101, 108, 108]


# The head runs on transformers' MtpModel one layer at a time (5.24 does); the oldest supported transformers refuses it
# in one line, which the last test here holds.
needs_heads = pytest.mark.skipif(not runs_heads(), reason="this transformers' MtpModel runs no head layer alone")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """family → (folder, target) for each fixture family, written once."""
    out = {}
    for fam in FAMILIES:
        folder = tmp_path_factory.mktemp(fam)
        out[fam] = (folder, write_mtp_checkpoint(fam, folder, seed=3))
    return out


def _pair(target, tok, eos=frozenset({1})) -> ModelPair:
    return ModelPair(target=target, draft=None, tokenizer=tok, device=CPU, dtype=torch.float32, eos_ids=eos,
                     name_target="t", name_draft="mtp")


@needs_heads
@pytest.mark.parametrize("family", list(FAMILIES))
def test_greedy_with_the_mtp_head_is_generates(family, folders):
    folder, target = folders[family]
    pair = _pair(target, make_byte_tokenizer())
    for gamma in (1, 3):   # the head's depth, and chained past it
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma), drafter="mtp")
        evs = list(dec.generate(PROMPT, max_new_tokens=24))
        steps = [e for e in evs if isinstance(e, StepEvent)]
        assert emitted(evs) == greedy_ref(pair, PROMPT, 24)
        assert sum(len(e.drafted) for e in steps) > 0


@needs_heads
def test_a_per_token_hybrid_hands_the_head_its_prompt_rows_with_the_first_pass(folders, monkeypatch):
    """Where the load check makes a hybrid run `generate`'s passes (the prompt in the first verify pass; on CUDA
    in bf16 Qwen3.5 does), the prompt's rows come with that pass: the head drafts from the second step on, and
    the output is still generate's (an H200 run stopped on a missing prefill row before this)."""
    from gammatune_tui.engine.runners import hybrid_probe

    folder, target = folders["qwen3_5_text"]
    monkeypatch.setitem(hybrid_probe._PROBES, target, hybrid_probe.Probe(per_token=True))
    pair = _pair(target, make_byte_tokenizer())
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), drafter="mtp")
    evs = list(dec.generate(PROMPT, max_new_tokens=16))
    steps = [e for e in evs if isinstance(e, StepEvent)]
    assert dec.runners.target.per_token
    assert emitted(evs) == greedy_ref(pair, PROMPT, 16)
    assert len(steps[0].drafted) == 0 and sum(len(e.drafted) for e in steps[1:]) > 0


@needs_heads
@pytest.mark.parametrize("family", ["deepseek_v3", "mellum"])   # glm4_moe_lite: transformers runs no MTP for it
def test_the_heads_drafts_are_transformers_mtp_candidate_generators(family, folders):
    """transformers' generate(use_mtp=True) drafts num_mtp_layers (1) token a step from the same head; at that γ
    gammatune's head proposes the same token for every position both draft (same hidden state and shift).
    transformers drafts nothing in its first step (its target runs the whole prompt first); gammatune's head
    already drafts the first answer token from the prompt's own rows: one position more."""
    from transformers.generation import candidate_generator as cg

    folder, target = folders[family]
    n = target.config.num_hidden_layers
    # transformers finds the head by the real depth (`model.layers.61`); this tiny one is at depth n
    target._keys_to_ignore_on_load_unexpected = [rf"model\.layers\.{n}.*"] if family != "mellum" else [r"^mtp\."]
    theirs: dict[int, int] = {}
    real = cg.MTPCandidateGenerator.get_candidates

    def spy(self, input_ids, *a, **k):
        ids, logits = real(self, input_ids, *a, **k)
        if logits is not None:
            theirs[input_ids.shape[1]] = int(ids[0, input_ids.shape[1]])   # position → drafted token
        return ids, logits

    cg.MTPCandidateGenerator.get_candidates = spy
    try:
        x = torch.tensor([PROMPT])
        ref = target.generate(x, do_sample=False, max_new_tokens=16, use_mtp=True, eos_token_id=None)
    finally:
        cg.MTPCandidateGenerator.get_candidates = real
    pair = _pair(target, make_byte_tokenizer(), eos=frozenset({-1}))
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 1), drafter="mtp")
    evs = list(dec.generate(PROMPT, max_new_tokens=16))
    ours: dict[int, int] = {}
    pos = len(PROMPT)
    for e in evs:
        if isinstance(e, StepEvent):
            ours.update({pos + i: t.id for i, t in enumerate(e.drafted)})
            pos += len(e.emitted)
    assert emitted(evs) == ref[0, len(PROMPT):].tolist()
    both = sorted(set(ours) & set(theirs))
    assert len(both) >= 10 and [ours[p] for p in both] == [theirs[p] for p in both]
    assert len(PROMPT) in ours and len(PROMPT) not in theirs


@needs_heads
def test_sampled_output_with_the_mtp_head_follows_the_targets_law_on_the_hybrid(tmp_path):
    """qwen3_5_text: the target's recurrent rollback and the head's cache rewind together (Mellum's MoE head
    passes too, in 140 s: left to the greedy and transformers tests here)."""
    target = write_mtp_checkpoint("qwen3_5_text", tmp_path, seed=11, vocab=8, init=0.6)
    pair = _pair(target, make_word_tokenizer([str(i) for i in range(8)]), eos=frozenset({-1}))
    cfg = SamplingConfig(temperature=1.0)
    p_law = joint_law(target, Served(cfg), 8)
    counts: Counter = Counter()
    rolled = 0
    dec = None
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), dataclasses.replace(cfg, seed=seed),
                                 drafter="mtp")
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                rolled += 0 < ev.accepted < len(ev.drafted)
        counts[out[0] * 8 + out[1]] += 1
    assert rolled > 0
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3


def test_a_checkpoint_without_a_head_or_a_family_without_heads_gets_one_line(tmp_path):
    target = write_mtp_checkpoint("mellum", tmp_path / "bare", with_head=False)
    with pytest.raises(ModelLoadError, match=r"carries no MTP head \(no mtp\.\* tensors\); --draft mtp needs one"):
        load_head(target)
    llama = make_llama(64, seed=0)
    with pytest.raises(ModelLoadError, match="^llama ships no MTP head that gammatune can read"):
        read_head(tmp_path / "bare", llama.config)
    cfg = dataclasses.make_dataclass("C", [("model_type", str), ("num_hidden_layers", int)])("deepseek_v32", 2)
    with pytest.raises(ModelLoadError, match="^deepseek_v32: its MTP head .* indexed sparse attention"):
        read_head(tmp_path / "bare", cfg)


def _acceptance(pair, prompts, drafter) -> float:
    """Accepted drafts over drafted ones, greedy, γ 1 (the depth the head was fitted for; its chained steps
    read its own output, which it was not fitted on), over `prompts` (each checked against `generate`)."""
    drafted = accepted = 0
    for p in prompts:
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 1), drafter=drafter)
        evs = list(dec.generate(p, max_new_tokens=30))
        assert emitted(evs) == greedy_ref(pair, p, 30)
        steps = [e for e in evs if isinstance(e, StepEvent)]
        drafted += sum(len(e.drafted) for e in steps)
        accepted += sum(e.accepted for e in steps)
    return accepted / drafted


@needs_heads
def test_a_trained_head_is_accepted_and_the_wrong_hidden_state_collapses_it(tmp_path, monkeypatch):
    """A head fitted for seconds on its target's own text is accepted most of the time; fed the target's
    state before the final norm instead of after, or paired one position off, acceptance collapses: the
    wiring errors that never look broken (LightLLM PR #1402) show in the numbers."""
    from gammatune_tui.engine.drafting import mtp as mtp_module
    from tiny_mtp import train_head

    target = write_mtp_checkpoint("qwen3_5_text", tmp_path, seed=5, vocab=64, init=0.3)
    with torch.no_grad():   # a final norm whose scales spread as trained models' do (Qwen3.5's is 1 + weight)
        g = torch.Generator().manual_seed(0)
        target.model.norm.weight.copy_(torch.exp(2 * torch.randn(target.model.norm.weight.shape, generator=g)) - 1)
    for p in target.parameters():
        p.requires_grad_(False)
    head = load_head(target)
    prompts = [[0, 5 + i, 9 + 2 * i, 7 + i] for i in range(6)]
    assert train_head(target, head, prompts, steps=40) > 0.9
    monkeypatch.setattr(mtp_module, "load_head", lambda t: head)
    pair = _pair(target, make_word_tokenizer([str(i) for i in range(64)]), eos=frozenset({-1}))
    right = _acceptance(pair, prompts, "mtp")
    pre = _acceptance(pair, prompts, DrafterSettings("mtp", mtp_pre_norm=True))

    def off_by_one(self, ids):   # row t paired with the token at t, not t + 1
        if self.waiting:
            start = self.head.length
            out = self.head.extend(torch.stack(self.waiting), ids[start:start + len(self.waiting)])
            self.waiting = []
            self.last_out = out[-1]
        return self.last_out

    monkeypatch.setattr(mtp_module.MtpSource, "_catch_up", off_by_one)
    shifted = _acceptance(pair, prompts, "mtp")
    assert right > 0.9, right   # measured 0.98
    assert pre < 0.65 and shifted < 0.65, (right, pre, shifted)   # measured 0.50 and 0.43


@needs_heads
def test_a_truncated_checkpoint_or_a_head_that_does_not_fit_gets_one_line(tmp_path, folders):
    folder, target = folders["mellum"]
    cut = tmp_path / "cut"
    cut.mkdir()
    data = (folder / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match=r"model\.safetensors: cannot read its tensors") as err:
        read_head(cut, target.config)
    assert "\n" not in str(err.value)
    other = write_mtp_checkpoint("mellum", tmp_path / "wide", hidden=32)   # a head 32 wide for a target 64 wide
    from gammatune_tui.engine.drafting.mtp_head import MtpHead

    with pytest.raises(ModelLoadError, match="MTP tensor layers.0.* has shape .* the target's head needs"):
        MtpHead(target, read_head(tmp_path / "wide", other.config))


@pytest.mark.skipif(runs_heads(), reason="this transformers runs MTP heads")
def test_an_older_transformers_refuses_the_head_in_one_line(folders):
    folder, target = folders["deepseek_v3"]
    pair = _pair(target, make_byte_tokenizer())
    with pytest.raises(ModelLoadError, match="needs a transformers whose MtpModel runs one head layer at a time"):
        list(SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), drafter="mtp").generate(PROMPT, max_new_tokens=4))
