"""The demo tokenizer is byte-level: any text at all survives encode → decode."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gammatune_tui.demo import TARGET_DIR
from gammatune_tui.resources import demo_pair_installed
from gammatune_tui.demo.corpus import load_corpus
from gammatune_tui.demo.tokenizer import BOS, EOS, byte_lengths, train_bpe

# everything except lone surrogates (which no UTF-8 text can contain); control characters included
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)


@pytest.fixture(scope="module")
def small_tokenizer():
    return train_bpe(load_corpus(max_bytes=100_000).train, vocab_size=600)


@pytest.fixture(scope="module")
def shipped_tokenizer():
    from transformers import AutoTokenizer

    assert demo_pair_installed(), "the demo pair is missing from gammatune_tui/demo/pair"
    return AutoTokenizer.from_pretrained(TARGET_DIR)


def _roundtrip(tok, text: str) -> None:
    ids = tok.encode(text, add_special_tokens=False)
    assert tok.decode(ids) == text
    assert all(0 <= i < len(tok) for i in ids)


@settings(max_examples=150, deadline=None)
@given(text=ANY_TEXT)
def test_trained_tokenizer_round_trips_any_text(small_tokenizer, text):
    _roundtrip(small_tokenizer, text)


@settings(max_examples=150, deadline=None)
@given(text=ANY_TEXT)
def test_shipped_tokenizer_round_trips_any_text(shipped_tokenizer, text):
    _roundtrip(shipped_tokenizer, text)


@pytest.mark.parametrize("text", ["", "\x00\x1b[31m\r\n\t", "  leading and trailing  ", "日本語 🎉 é\u200b", "<|eos|> x"])
def test_awkward_strings_round_trip(shipped_tokenizer, text):
    _roundtrip(shipped_tokenizer, text)


def test_special_tokens_and_no_automatic_bos(shipped_tokenizer):
    tok = shipped_tokenizer
    assert tok.bos_token == BOS and tok.eos_token == EOS
    assert tok.bos_token_id != tok.eos_token_id
    assert 4000 <= len(tok) <= 8192
    assert tok("def f():").input_ids[0] != tok.bos_token_id  # raw prompts are code prefixes


def test_byte_lengths_count_utf8_bytes(small_tokenizer):
    lengths = byte_lengths(small_tokenizer)
    text = "def ünïcode(x):\n    return x  # ✓\n"
    ids = small_tokenizer.encode(text, add_special_tokens=False)
    assert sum(lengths[i] for i in ids) == len(text.encode("utf-8"))
    assert lengths[small_tokenizer.bos_token_id] == 0
