"""`gammatune_tui.hf.generate` on a state-space model: the cache `generate` builds itself is no obstacle, and a
cache already holding a recurrent state is refused in one line (its tokens would otherwise be decoded twice)."""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine.loading.families import tiny_model
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.hf import generate

IDS = torch.tensor([[0, 17, 93, 402, 17, 93, 402, 17, 93]])


@pytest.fixture(scope="module")
def tok():
    from gammatune_tui.hf import demo_paths
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(demo_paths()[0])


@pytest.fixture(scope="module")
def mamba():
    return tiny_model("mamba", seed=1), tiny_model("mamba", seed=2)


def test_a_mamba_target_is_generates_own_greedy_text(mamba, tok):
    target, draft = mamba
    want = target.generate(IDS, do_sample=False, max_new_tokens=8)
    got = generate(target, IDS, draft_model=draft, do_sample=False, max_new_tokens=8, tokenizer=tok)
    assert torch.equal(got, want)


def test_a_cache_holding_a_recurrent_state_is_refused_in_one_line(mamba, tok):
    target, draft = mamba
    with torch.no_grad():
        cache = target(IDS, use_cache=True).past_key_values
    with pytest.raises(InvalidParameter, match="cache holds a recurrent state") as info:
        generate(target, IDS, draft_model=draft, do_sample=False, max_new_tokens=4, cache=cache, tokenizer=tok)
    assert "\n" not in str(info.value)
