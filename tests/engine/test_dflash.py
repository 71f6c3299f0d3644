"""`--draft dflash:PATH`: a DFlash block drafter (transformers' `muse_glimmer_assistant`) reads the target's layers and
drafts a block per forward (engine/drafting/dflash.py).

What a user would notice: greedy output is `generate`'s with the block truncated (γ below the block), whole, or
followed by a second block (γ above it); the blocks are transformers' own `DFlashTokenCandidateGenerator`'s at its
fixed γ (block size − 1), anchor for anchor; sampled output follows the target's law; a drafter for another target
is one line before anything loads.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.pair import ModelPair
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.drafting.dflash import check_drafter
from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
from gammatune_tui.errors import InvalidParameter
from head_law import two_token_counts
from test_sampling import N_SAMPLES, chi2_test, joint_law
from tiny_dflash import as_zlab, train_dflash, write_dflash
from tiny_models import make_byte_tokenizer, make_llama

PROMPT = [0, 72, 101, 108, 108, 111, 44, 32, 72, 101]
TRAIN = [PROMPT, [0, 84, 104, 101, 32], [0, 65, 66, 67], [0, 100, 111, 103, 115]]


def _pair(target, eos=frozenset({1})) -> ModelPair:
    return ModelPair(target=target, draft=None, tokenizer=make_byte_tokenizer(), device=torch.device("cpu"),
                     dtype=torch.float32, eos_ids=eos, name_target="t", name_draft="dflash")


def _steps(pair, root, gamma: int, n: int = 24, calls: list | None = None) -> list[StepEvent]:
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma), SamplingConfig(),
                             drafter=DrafterSettings("dflash", dflash_head=str(root)))
    events = list(dec.generate(PROMPT, max_new_tokens=n))
    if calls is not None:
        calls.append(events[-1].draft_calls)   # the summary's count of drafter forwards
    return [e for e in events if isinstance(e, StepEvent)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    target = make_llama(260, seed=1, init=1.0, layers=3)
    return target, write_dflash(tmp_path_factory.mktemp("dflash"), target, layer_ids=(0, 2), block_size=4)


def test_greedy_is_generates_with_the_block_cut_whole_or_followed_by_a_second(tiny):
    target, root = tiny
    x = torch.tensor([PROMPT])
    ref = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=24)[0, len(PROMPT):]
    pair = _pair(target)
    for gamma in (1, 3, 5):   # block 4: 3 drafts per forward; γ 5 needs a second block
        counted: list = []
        steps = _steps(pair, root, gamma, calls=counted)
        assert [t.id for e in steps for t in e.emitted] == ref.tolist()
        assert max(len(e.drafted) for e in steps) == gamma   # (a drafted EOS or the budget can cut a window)
        assert counted[0] == sum(-(-len(e.drafted) // 3) for e in steps)   # one forward per block begun


def test_the_blocks_are_transformers_dflash_generators(tiny):
    """transformers drafts block size − 1 tokens from the same anchor and context: at γ = 3 every block gammatune
    drafts from an anchor transformers also drafted from is the same block (transformers' first step drafts none)."""
    from transformers import AutoModel
    from transformers.generation import candidate_generator as cg

    target, root = tiny
    drafter = AutoModel.from_pretrained(str(root)).eval()
    theirs: dict[int, list[int]] = {}
    real = cg.DFlashTokenCandidateGenerator.get_candidates

    def spy(self, input_ids, *a, **k):
        ids, logits = real(self, input_ids, *a, **k)
        if logits is not None:
            theirs[input_ids.shape[1]] = ids[0, input_ids.shape[1]:].tolist()
        return ids, logits

    cg.DFlashTokenCandidateGenerator.get_candidates = spy
    try:
        x = torch.tensor([PROMPT])
        ref = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=20,
                              assistant_model=drafter, speculation_type="dflash")
    finally:
        cg.DFlashTokenCandidateGenerator.get_candidates = real
    ours: dict[int, list[int]] = {}
    pos = len(PROMPT)
    for e in _steps(_pair(target, eos=frozenset({-1})), root, 3, 20):
        ours[pos] = [t.id for t in e.drafted]
        pos += len(e.emitted)
    assert [t for ts in [ref[0, len(PROMPT):].tolist()] for t in ts] == \
        target.generate(torch.tensor([PROMPT]), do_sample=False, max_new_tokens=20)[0, len(PROMPT):].tolist()
    both = sorted(set(ours) & set(theirs))
    assert len(both) >= 8 and all(ours[p] == theirs[p][:len(ours[p])] for p in both)
    assert len(PROMPT) in ours and len(PROMPT) not in theirs


def _per_block(pair, root, prompts=TRAIN, n: int = 30) -> float:
    """Drafts accepted per block at γ = block size − 1 = 3 (one block per step), over the prompts' greedy runs, each
    checked against `generate`."""
    accepted = steps = 0
    for prompt in prompts:
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig(),
                                 drafter=DrafterSettings("dflash", dflash_head=str(root)))
        events = [e for e in dec.generate(prompt, max_new_tokens=n) if isinstance(e, StepEvent)]
        x = torch.tensor([prompt])
        want = pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n)
        assert [t.id for e in events for t in e.emitted] == want[0, len(prompt):].tolist()
        accepted, steps = accepted + sum(e.accepted for e in events), steps + len(events)
    return accepted / steps


def test_a_trained_drafter_is_accepted_and_the_wrong_rows_collapse_it(tiny, tmp_path, monkeypatch):
    """A drafter fitted for seconds on its target's own text (tests/tiny_dflash.train_dflash) has most of each block
    accepted, where the random one has almost none, and greedy output is still `generate`'s. Fed the wrong rows it
    collapses, though the output stays exact: the last layer's row before the final norm (transformers' DFlash reads
    `hidden_states[N]`, after it), each layer's input instead of its output (`hidden_states[id]`), or every row one
    position late. Those errors never look broken; only acceptance shows them."""
    from gammatune_tui.engine.drafting import dflash
    from gammatune_tui.engine.runners.hidden import TargetReads

    target, random = tiny
    trained = train_dflash(target, write_dflash(tmp_path / "trained", target, layer_ids=(0, 2), block_size=4), TRAIN)
    pair = _pair(target)
    right, unfitted = _per_block(pair, trained), _per_block(pair, random)
    assert right > 2.0 and unfitted < 0.5, (right, unfitted)   # of 3; measured 2.72 and 0.01
    made = dflash.DFlashSource.__init__
    wrong: dict[str, float] = {}
    for name, reads in (("pre-norm", TargetReads(layers=(1,), last=True)), ("inputs", TargetReads(layers=(0, 2)))):
        def rewired(self, t, m, reads=reads):
            made(self, t, m)
            self.reads = reads
        monkeypatch.setattr(dflash.DFlashSource, "__init__", rewired)
        wrong[name] = _per_block(pair, trained)
    monkeypatch.setattr(dflash.DFlashSource, "__init__", made)
    observe = dflash.DFlashSource.observe

    def late(self, rows):   # position t gets the row of t − 1 (the prompt's first a zero row)
        seen = self.__dict__.setdefault("_seen", {})
        for j in range(len(rows)):
            seen[rows.start + j] = rows.hidden[j]
        prev = [seen.get(rows.start + j - 1, torch.zeros_like(rows.hidden[0])) for j in range(len(rows))]
        observe(self, dataclasses.replace(rows, hidden=torch.stack(prev)))

    monkeypatch.setattr(dflash.DFlashSource, "observe", late)
    wrong["late"] = _per_block(pair, trained)
    assert max(wrong.values()) < 1.0, (right, wrong)   # measured 0.06, 0.07 and 0.11


def test_sampled_output_follows_the_targets_law(tmp_path):
    target = make_llama(8, seed=11, init=0.6, eos=None, bos=None, layers=3)
    root = write_dflash(tmp_path / "d", target, layer_ids=(1, 2), block_size=3, mask_token_id=7, init=1.0)
    pair = dataclasses.replace(_pair(target), eos_ids=frozenset({-1}))
    cfg = SamplingConfig(temperature=1.0)
    p_law = joint_law(target, Served(cfg), 8)
    counts, accepted, rejected = two_token_counts(pair, DrafterSettings("dflash", dflash_head=str(root)), cfg, 8)
    assert accepted > 0 and rejected > 0   # both the accept and the residual paths ran
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3


def test_a_drafter_for_another_target_is_one_line(tmp_path, tiny):
    target, _ = tiny
    wide = write_dflash(tmp_path / "wide", make_llama(260, seed=2, hidden=64, layers=3), layer_ids=(0, 2))
    deep = write_dflash(tmp_path / "deep", target, layer_ids=(0, 7))
    bare = tmp_path / "bare"
    bare.mkdir()
    for folder, words in ((wide, "its hidden size is 64, the target's 32"),
                          (deep, "reads target layers [0, 7], the target has 3 layers"),
                          (bare, "no config.json there")):
        with pytest.raises(InvalidParameter, match=re.escape(words)):
            check_drafter(str(folder), target.config)
    (deep / "model.safetensors").unlink()
    with pytest.raises(InvalidParameter, match="no model.safetensors there"):
        check_drafter(str(deep), target.config)


def test_z_labs_own_format_drafts_what_transformers_format_does(tiny, tmp_path):
    """z-lab's drafters (architectures DFlashDraftModel, fields under dflash_config, `fc` / `hidden_norm`) are read
    into transformers' port: the same drafts, step for step; its logit multiplier and softcap apply; DFlash2 (another
    network) is one line. (Checked once against z-lab's own dflash/model.py, with and without the multiplier and
    softcap: logits equal to the last bit on full-attention layers; see docs/heads-eagle-dflash.md on windows.)"""
    target, root = tiny
    pair = _pair(target)
    zlab = as_zlab(root, tmp_path / "zlab")
    steps = {name: _steps(pair, folder, 3) for name, folder in (("hf", root), ("zlab", zlab))}
    assert [[t.id for t in e.drafted] for e in steps["hf"]] == [[t.id for t in e.drafted] for e in steps["zlab"]]
    capped = _steps(pair, as_zlab(root, tmp_path / "capped", output_multiplier=0.01, final_logit_softcapping=0.5), 3)
    assert [t.id for e in capped for t in e.emitted] == [t.id for e in steps["hf"] for t in e.emitted]
    assert max(t.top_prob for e in capped for t in e.drafted) < max(t.top_prob for e in steps["hf"] for t in e.drafted)
    with pytest.raises(InvalidParameter, match="z-lab's DFlash2 .* is not read yet"):
        check_drafter(str(as_zlab(root, tmp_path / "v2", version=2)), target.config)
