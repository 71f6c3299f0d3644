"""A tiny random-weight pair whose draft is a noisy copy of the target, so acceptance is mixed."""

from __future__ import annotations

import pytest


class StubTokenizer:
    """Enough of a tokenizer for the decoder: decode, an EOS id, a name."""

    name_or_path = "stub"
    eos_token_id = 1
    chat_template = None

    def decode(self, ids, **_):
        return "".join(chr(0x61 + (int(i) % 26)) for i in ids)

    def __call__(self, text, **_):
        class Enc:
            input_ids = [2 + (ord(c) % 60) for c in text]

        return Enc()


def _build_pair(noise: float = 0.2, seed: int = 0, scale: float = 40.0):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from gammatune_tui.engine.loading.models import ModelPair

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                      eos_token_id=1, bos_token_id=0, pad_token_id=0, tie_word_embeddings=False)
    target = LlamaForCausalLM(cfg).eval()
    draft = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for pt, pd in zip(target.parameters(), draft.parameters()):
            pd.copy_(pt + noise * pt.std() * torch.randn_like(pt))
        # sharpen the target a little so greedy paths are not near-ties everywhere
        target.lm_head.weight.mul_(scale)
        draft.lm_head.weight.mul_(scale)
    return ModelPair(target=target, draft=draft, tokenizer=StubTokenizer(), device=torch.device("cpu"),
                     dtype=torch.float32, name_target="tiny-target", name_draft="tiny-draft")


@pytest.fixture(scope="session")
def bench_pair():
    import torch

    torch.set_num_threads(1)
    return _build_pair()
