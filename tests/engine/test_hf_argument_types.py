"""`hf.generate` / `gammatune_generate` arguments of the wrong type: `InvalidParameter` naming the argument, before any work."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from gammatune_tui.errors import InvalidParameter
from gammatune_tui.hf import gammatune_generate, generate


@pytest.fixture(scope="module")
def models(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    return AutoModelForCausalLM.from_pretrained(t), AutoModelForCausalLM.from_pretrained(d)


IDS = torch.tensor([[1, 2, 3]])


@pytest.mark.parametrize("ids, kwargs, named", [
    ([1, 2, 3], {}, "input_ids"),
    (torch.tensor([1.0, 2.0]), {}, "input_ids"),
    (torch.tensor([1, 2, 3]), {}, "input_ids"),
    (IDS, {"seed": "x"}, "seed"),
    (IDS, {"seed": -1}, "seed"),
    (IDS, {"on_event": 5}, "on_event"),
    (IDS, {"streamer": 5}, "streamer"),
])
def test_wrong_types_name_the_argument(models, ids, kwargs, named, monkeypatch):
    target, draft = models
    calls = []
    real = target.forward
    monkeypatch.setattr(target, "forward", lambda *a, **k: calls.append(1) or real(*a, **k))
    with pytest.raises(InvalidParameter, match=named):
        generate(target, ids, draft_model=draft, max_new_tokens=4, do_sample=False, **kwargs)
    assert not calls   # refused before any forward pass


def test_through_model_generate_too(models):
    target, draft = models
    with pytest.raises(InvalidParameter, match="on_event"):
        target.generate(IDS, custom_generate=gammatune_generate, draft_model=draft, max_new_tokens=4,
                        do_sample=False, on_event="print")
