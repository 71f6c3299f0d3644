"""Sampled decoding of other families follows the target's law: one attention family and one hybrid.

The greedy matrix (test_family_matrix.py) shows the tokens are generate's at
temperature 0; at T > 0 what matters is the law of the output. Each family's
tiny model over an 8-token vocabulary is sampled many times through the
engine with a draft whose law clearly differs; the chi-square test must accept
the target's law and reject the draft's. The hybrid exercises the recurrent
runner's rewind after a rejected draft token, where a state left one token
ahead would skew the law without changing any greedy answer.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.loading.families import tiny_model
from gammatune_tui.engine.loading.models import ModelPair

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from test_sampling import N_SAMPLES, chi2_test, joint_law, sample_pairs  # noqa: E402

from tiny_models import make_word_tokenizer  # noqa: E402

WORDS = list("abcdefgh")


@pytest.mark.parametrize("family", ["qwen3", "qwen3_5_text"])
def test_sampled_output_follows_the_target_law(family):
    target = tiny_model(family, seed=3, vocab_size=len(WORDS), initializer_range=0.1)
    draft = copy.deepcopy(target)
    g = torch.Generator().manual_seed(4)
    with torch.no_grad():
        w = draft.get_output_embeddings().weight
        w.add_(torch.randn(w.shape, generator=g) * 0.8 * w.std())
    pair = ModelPair(target=target, draft=draft, tokenizer=make_word_tokenizer(WORDS), device=torch.device("cpu"),
                     dtype=torch.float32, name_target=family, name_draft=f"{family}-draft", eos_ids=frozenset({-1}))
    cfg = SamplingConfig(temperature=1.0)
    served = Served(cfg)
    p_law, q_law = joint_law(target, served, len(WORDS)), joint_law(draft, served, len(WORDS))
    assert (p_law - q_law).abs().sum() > 0.3   # the draft's law really differs, or the test could not fail
    counts, bonus = sample_pairs(pair, PolicySettings.build("specdecode", 3), cfg, N_SAMPLES)
    assert bonus > 0
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3
    assert chi2_test(counts, q_law, N_SAMPLES) < 1e-6
