"""The demo pair's shared tokenizer: byte-level BPE, so any text round-trips exactly.

No normalizer and no prefix space: the byte-level pre-tokenizer maps every byte
to a printable symbol and the byte-level decoder maps it back, so
decode(encode(s)) == s for every string, including control characters and any
Unicode. The two special tokens mark document boundaries during training.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

BOS = "<|bos|>"
EOS = "<|eos|>"
DEFAULT_VOCAB = 4096


def train_bpe(texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB) -> PreTrainedTokenizerFast:
    """Train byte-level BPE on `texts`; the result is ready for `save_pretrained`."""
    if not 4096 // 16 <= vocab_size <= 65536:
        raise ValueError(f"vocab_size {vocab_size} out of range")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return wrap(tok)


def wrap(tok: Tokenizer) -> PreTrainedTokenizerFast:
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=EOS,
        clean_up_tokenization_spaces=False,
        model_max_length=1024,
    )
    return fast


def byte_lengths(tokenizer: PreTrainedTokenizerFast) -> list[int]:
    """How many UTF-8 bytes each token id stands for (special tokens count 0); for bits/byte."""
    inv = {c: b for b, c in enumerate(_bytes_to_unicode())}
    specials = set(tokenizer.all_special_ids)
    out = []
    for i, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))):
        out.append(0 if i in specials or piece is None else sum(1 for ch in piece if ch in inv))
    return out


def _bytes_to_unicode() -> list[str]:
    """GPT-2's byte → printable-character table, as used by the ByteLevel pre-tokenizer (index = byte)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]
