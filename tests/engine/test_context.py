"""The context check: one function (engine/context.py) that run, compare, bench, chat and the API share."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gammatune_tui.engine.context import ContextWindow, context_window, window_of
from gammatune_tui.engine.decoder import SpeculativeDecoder
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.errors import ContextTooLong, InvalidParameter


def cfg(**kw):
    return SimpleNamespace(**kw)


def test_the_smaller_of_target_and_draft_binds_and_is_named():
    w = window_of(cfg(max_position_embeddings=4096), cfg(max_position_embeddings=2048))
    assert (w.tokens, w.source) == (2048, "the draft's max_position_embeddings")
    assert window_of(cfg(n_positions=1024), None).source == "the target's n_positions"


def test_the_tokenizer_limit_counts_only_when_no_config_says():
    tok = SimpleNamespace(model_max_length=512)
    assert window_of(cfg(), cfg(), tok) == ContextWindow(512, "the tokenizer's model_max_length")
    assert window_of(cfg(max_position_embeddings=4096), None, tok).tokens == 4096
    assert window_of(cfg(), None, SimpleNamespace(model_max_length=int(1e30))) is None   # transformers' "unknown"


def test_check_says_the_limit_and_what_fits():
    w = ContextWindow(1024, "the target's max_position_embeddings")
    w.check(24, 1000)                                  # exactly full: fine
    with pytest.raises(ContextTooLong) as e:
        w.check(24, 1001)
    msg = str(e.value)
    assert "1,024-token context" in msg and "at most 1,000 new tokens fit" in msg and "\n" not in msg
    assert isinstance(e.value, InvalidParameter) and (e.value.limit, e.value.prompt_tokens) == (1024, 24)
    with pytest.raises(ContextTooLong, match="the prompt is 1,024 tokens.*shorten it to at most 1,023"):
        w.check(1024, 1)
    assert w.room(1000) == 24 and w.room(2000) == 0


def test_generate_refuses_before_any_model_work(tiny_pair, monkeypatch):
    calls = []
    real = type(tiny_pair.target).forward
    monkeypatch.setattr(type(tiny_pair.target), "forward", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    dec = SpeculativeDecoder(tiny_pair, PolicySettings(), SamplingConfig(temperature=0.0))
    assert context_window(tiny_pair).tokens == 1024
    with pytest.raises(ContextTooLong, match="at most 1,021 new tokens fit"):
        dec.generate([0, 5, 6], max_new_tokens=10**12)     # raises at the call, not at the first step
    with pytest.raises(ContextTooLong, match="the prompt is 2,000 tokens"):
        dec.generate([5] * 2000, max_new_tokens=1)
    assert calls == []
    events = list(dec.generate([0, 5, 6], max_new_tokens=4))   # a budget that fits still runs
    assert events[-1].tokens == 4


def test_a_budget_that_cannot_fit_any_prompt_is_refused_before_tokenizing():
    from gammatune_tui.engine.context import check_budget

    w = ContextWindow(1024, "the target's max_position_embeddings")
    check_budget(w, 1023)
    with pytest.raises(ContextTooLong, match=r"--max-new-tokens 1,024 does not fit .* at most 1,023 new tokens fit"):
        check_budget(w, 1024)
