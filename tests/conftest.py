"""Shared fixtures: tiny random-weight Llama pairs saved like real model dirs (seconds, no downloads).

Add fixtures here additively; the engine's are:
  tiny_pair_dirs  -> (target_dir, draft_dir): byte-level tokenizer (259 ids), noisy draft
  tiny_pair       -> ModelPair loaded from those dirs with load_pair (cpu, float32)
  micro_pair      -> ModelPair over an 8-token vocabulary, for exact-law tests
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402


def make_byte_tokenizer():
    """Byte-level BPE without merges: every byte is a token, so multi-byte characters span tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {"<s>": 0, "</s>": 1, "<unk>": 2}
    for ch in sorted(alphabet):
        vocab[ch] = len(vocab)
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    from tokenizers.processors import TemplateProcessing

    tk.post_processor = TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
        clean_up_tokenization_spaces=False,
    )


def make_word_tokenizer(words: list[str]):
    """A whitespace WordLevel tokenizer over `words` (no special tokens): tiny exact-law models."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(words)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token=words[0]))
    tk.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tk.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token=words[0], clean_up_tokenization_spaces=False)


def make_llama(vocab: int, seed: int, *, hidden: int = 32, layers: int = 2, init: float = 0.3,
               eos: int | None = 1, bos: int | None = 0):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
        bos_token_id=bos, eos_token_id=eos, pad_token_id=None, tie_word_embeddings=False,
        initializer_range=init,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).eval()
    model.generation_config.eos_token_id = eos
    model.generation_config.bos_token_id = bos
    model.generation_config.pad_token_id = eos
    return model


def noisy_copy(model, seed: int, scale: float, only: str | None = "lm_head"):
    """The model's weights plus Gaussian noise: a draft that agrees often but not always.

    Noise on every layer of a random network decorrelates it almost entirely,
    so by default only the output projection (`only`) is perturbed.
    """
    import copy

    import torch

    draft = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in draft.named_parameters():
            if only is not None and not name.startswith(only):
                continue
            p.add_(torch.randn(p.shape, generator=g) * scale * p.std())
    return draft


@pytest.fixture(scope="session")
def tiny_pair_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_pair")
    tok = make_byte_tokenizer()
    target = make_llama(len(tok), seed=1, init=1.0)
    draft = noisy_copy(target, seed=2, scale=0.15)
    out = []
    for name, model in (("target", target), ("draft", draft)):
        d = root / name
        model.save_pretrained(d)
        tok.save_pretrained(d)
        out.append(d)
    return tuple(out)


@pytest.fixture(scope="session")
def tiny_pair(tiny_pair_dirs):
    from gammatune_tui.engine.models import load_pair

    t, d = tiny_pair_dirs
    return load_pair(str(t), str(d), device="cpu", dtype="float32", threads=1)


MICRO_WORDS = list("abcdefgh")


@pytest.fixture(scope="session")
def micro_pair():
    """8-token vocabulary, no EOS; the draft's output layer is noisy so q differs clearly from p."""
    import torch

    from gammatune_tui.engine.models import ModelPair

    tok = make_word_tokenizer(MICRO_WORDS)
    target = make_llama(len(MICRO_WORDS), seed=11, init=0.6, eos=None, bos=None, layers=1)
    draft = noisy_copy(target, seed=12, scale=0.8)
    return ModelPair(target=target, draft=draft, tokenizer=tok, device=torch.device("cpu"),
                     dtype=torch.float32, name_target="micro-target", name_draft="micro-draft",
                     eos_ids=frozenset({-1}))
