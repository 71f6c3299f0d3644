"""`--mtp-vocab N`: the MTP head drafts over the N most frequent tokens only (FR-Spec, engine/drafting/frspec.py).

What a user would notice: the head proposes only tokens of the reduced
vocabulary S (the tokenizer's special tokens and the lowest ids), the output
is still exactly the target's (greedy is `generate`'s on the hybrid and on
Mellum; sampled follows the target's law, also for the tokens outside S,
which only the verify's residual can emit), and q is exactly the served law
over S with zero elsewhere.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
from gammatune_tui.engine.drafting.frspec import ranked_subset, special_ids
from gammatune_tui.engine.drafting.mtp import head_of
from gammatune_tui.errors import InvalidParameter
from test_mtp import PROMPT, _pair, needs_heads
from test_sampling import N_SAMPLES, PROMPT_IDS, chi2_test, joint_law
from tiny_models import emitted, greedy_ref, make_byte_tokenizer, make_word_tokenizer
from tiny_mtp import write_mtp_checkpoint


@needs_heads
@pytest.mark.parametrize("family", ["qwen3_5_text", "mellum"])
def test_greedy_with_a_reduced_draft_vocabulary_is_generates_and_drafts_only_from_it(family, tmp_path):
    target = write_mtp_checkpoint(family, tmp_path, seed=3)
    tok = make_byte_tokenizer()
    pair = _pair(target, tok)
    allowed = set(ranked_subset(40, 260, special_ids(tok, pair.eos_ids)).tolist())
    assert len(allowed) == 40 and 1 in allowed   # the EOS id is always in S
    for gamma in (1, 3):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma),
                                 drafter=DrafterSettings("mtp", mtp_vocab=40))
        evs = list(dec.generate(PROMPT, max_new_tokens=24))
        drafted = [t.id for e in evs if isinstance(e, StepEvent) for t in e.drafted]
        assert emitted(evs) == greedy_ref(pair, PROMPT, 24)
        assert drafted and set(drafted) <= allowed
        assert set(emitted(evs)) - allowed   # the target still emits tokens the head can no longer draft


@needs_heads
def test_sampled_output_with_a_reduced_draft_vocabulary_follows_the_targets_law(tmp_path):
    """S = {0, 1, 2} of 8 tokens: the other five reach the output only through the residual, at their p."""
    target = write_mtp_checkpoint("qwen3_5_text", tmp_path, seed=11, vocab=8, init=0.6)
    pair = _pair(target, make_word_tokenizer([str(i) for i in range(8)]), eos=frozenset({-1}))
    cfg = SamplingConfig(temperature=1.0)
    p_law = joint_law(target, Served(cfg), 8)
    counts: Counter = Counter()
    drafted: set[int] = set()
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), dataclasses.replace(cfg, seed=seed),
                                 drafter=DrafterSettings("mtp", mtp_vocab=3))
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                drafted.update(t.id for t in ev.drafted)
        counts[out[0] * 8 + out[1]] += 1
    assert drafted and drafted <= {0, 1, 2}
    assert any(k // 8 > 2 or k % 8 > 2 for k in counts)   # tokens outside S were emitted
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3


@needs_heads
def test_the_reduced_law_is_the_served_law_over_s_and_zero_elsewhere(tmp_path):
    """q equals the full head's logits masked to −∞ outside S, then served (temperature, top-k, top-p)."""
    target = write_mtp_checkpoint("mellum", tmp_path, seed=3)
    head = head_of(target)
    vocab = head.draft_vocab(50, (1,))
    row = torch.randn(64, generator=torch.Generator().manual_seed(0))
    full = head.logits(row)
    masked = torch.full_like(full, float("-inf"))
    masked[vocab.ids] = full[vocab.ids]
    for cfg in (SamplingConfig(temperature=0.0), SamplingConfig(temperature=0.7, top_k=10, top_p=0.9)):
        served = Served(cfg)
        want = torch.softmax(masked, -1) if served.greedy else served.probs(masked.unsqueeze(0))[0]
        got = vocab.law(row, served)
        assert got.shape == full.shape and torch.allclose(got, want, atol=1e-6)
        outside = torch.ones_like(got, dtype=torch.bool)
        outside[vocab.ids] = False
        assert float(got[outside].abs().sum()) == 0.0
    with pytest.raises(InvalidParameter, match=r"^--mtp-vocab 261: the target's vocabulary has only 260 tokens"):
        head.draft_vocab(261)


@needs_heads
def test_a_ranking_file_chooses_the_draft_vocabulary_and_a_bad_one_is_one_line(tmp_path):
    """`--mtp-vocab-file`: a .pt tensor or .json list of ids (FR-Spec's and SGLang's token maps), or text counted
    with the tokenizer; S is the special tokens and the file's ids (its first N with --mtp-vocab N), the output
    still `generate`'s. Ids past the vocabulary, a non-list, a missing file: one line each."""
    import json

    from gammatune_tui.engine.drafting.frspec import read_ranking

    target = write_mtp_checkpoint("qwen3_5_text", tmp_path / "q", seed=3)
    tok = make_byte_tokenizer()
    pair = _pair(target, tok)
    special = set(special_ids(tok, pair.eos_ids))
    torch.save(torch.arange(100, 140), tmp_path / "map.pt")
    (tmp_path / "map.json").write_text(json.dumps(list(range(200, 150, -1))))
    (tmp_path / "domain.txt").write_text("zzz zzz zzz yy x", encoding="utf-8")
    assert read_ranking(str(tmp_path / "domain.txt"), tok, 260)[:3] == tuple(tok.encode("z y", add_special_tokens=False))
    for file, n, allowed in (("map.pt", 0, set(range(100, 140))), ("map.json", 10, set(range(200, 190, -1))),
                             ("domain.txt", 0, set(tok.encode("zyx ", add_special_tokens=False)))):
        settings = DrafterSettings("mtp", mtp_vocab=n, mtp_vocab_file=str(tmp_path / file))
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), drafter=settings)
        evs = list(dec.generate(PROMPT, max_new_tokens=16))
        drafted = {t.id for e in evs if isinstance(e, StepEvent) for t in e.drafted}
        assert emitted(evs) == greedy_ref(pair, PROMPT, 16)
        assert drafted and drafted <= allowed | special, (file, drafted)
    (tmp_path / "far.json").write_text("[5, 300]")
    (tmp_path / "obj.json").write_text('{"5": 1}')
    for file, says in (("far.json", "token id 300 is outside the target's vocabulary of 260"),
                       ("obj.json", "not a list of token ids"), ("none.pt", "no such file")):
        with pytest.raises(InvalidParameter, match=f"^--mtp-vocab-file .*{file}: {says}"):
            read_ranking(str(tmp_path / file), tok, 260)
