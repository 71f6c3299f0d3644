"""Model shapes for the demo pair (Llama architecture, tied embeddings).

The target is ~7.4M parameters and the draft ~0.95M (≈7.8× smaller): small
enough to train on two CPU threads in half an hour, far enough apart in
quality that the draft is right most of the time but not always — which is
exactly what makes speculative decoding's three regimes visible.
"""

from __future__ import annotations

from typing import Any

from transformers import LlamaConfig

SHAPES: dict[str, dict[str, Any]] = {   # Any: LlamaConfig's keywords are typed each its own way
    "target": dict(hidden_size=256, intermediate_size=688, num_hidden_layers=8, num_attention_heads=8),
    # two layers, not four: at batch size 1 a decoding step costs about the same per layer whatever
    # its width, so a shallow draft is what makes drafting cheap (and two layers can still copy)
    "draft": dict(hidden_size=128, intermediate_size=384, num_hidden_layers=2, num_attention_heads=4),
    # for the test suite: trains in a second, proves the recipe end to end
    "tiny-target": dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2),
    "tiny-draft": dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2),
}


def llama_config(shape: str, vocab_size: int, bos_id: int, eos_id: int, max_positions: int = 1024) -> LlamaConfig:
    s = SHAPES[shape]
    return LlamaConfig(
        vocab_size=vocab_size,
        num_key_value_heads=s["num_attention_heads"],
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
        **s,
    )
