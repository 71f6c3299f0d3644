"""The KV cache goes to transformers under the name the installed version wants, without a warning.

transformers 5.24 deprecated `past_key_values=` (a FutureWarning on every
forward pass, four lines before every answer); 5.17, still on GPU images,
knows no other name. `make test` runs this file against both.
"""

from __future__ import annotations

import inspect
import warnings

import torch
from transformers import DynamicCache, LlamaForCausalLM

from gammatune_tui.engine.runners.hf_compat import cache_kw, output_cache
from tiny_models import make_llama


def test_the_name_follows_the_installed_signature():
    want = "cache" if "cache" in inspect.signature(LlamaForCausalLM.forward).parameters else "past_key_values"
    model = make_llama(64, seed=0)
    assert list(cache_kw(model, None)) == [want]
    assert list(cache_kw(model.model.layers[0], None)) == [want]


def test_an_old_style_module_gets_past_key_values():
    class Old(torch.nn.Module):
        def forward(self, input_ids, past_key_values=None, use_cache=False):
            return input_ids

    class New(torch.nn.Module):
        def forward(self, input_ids, cache=None, use_cache=False):
            return input_ids

    assert list(cache_kw(Old(), 1)) == ["past_key_values"]
    assert list(cache_kw(New(), 1)) == ["cache"]


def test_a_cached_forward_warns_nothing_and_returns_the_cache():
    model = make_llama(64, seed=0)
    cache = DynamicCache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = model(input_ids=torch.tensor([[1, 2, 3]]), **cache_kw(model, cache), use_cache=True)
    assert output_cache(out) is cache
    assert cache.get_seq_length() == 3


def test_the_suite_turns_deprecations_into_errors(pytestconfig):
    """The guard itself: without these filters the next deprecation reaches users first."""
    filters = pytestconfig.getini("filterwarnings")
    assert "error::FutureWarning" in filters and "error::DeprecationWarning" in filters
    with __import__("pytest").raises(FutureWarning):
        warnings.warn("deprecated", FutureWarning)
