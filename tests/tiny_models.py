"""Builders of tiny random-weight models and tokenizers (seconds, no downloads).

A module of its own, not conftest.py: several test folders have a conftest.py,
and `from conftest import …` would pick whichever is first on sys.path.
"""

from __future__ import annotations

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


def target_only_pair(source: str, *, seed: int = 1, init: float = 0.1, name: str = "tiny"):
    """A tiny target alone over the byte tokenizer, as load_pair(drafter=source) gives for a model-free source.

    Small weights (`init` 0.1) make the greedy text repeat, so prompt lookup
    and the n-gram pool find proposals and get them accepted.
    """
    import torch

    from gammatune_tui.engine.common.pair import ModelPair

    tok = make_byte_tokenizer()
    return ModelPair(target=make_llama(len(tok), seed=seed, init=init), draft=None, tokenizer=tok,
                     device=torch.device("cpu"), dtype=torch.float32, name_target=name, name_draft=source)


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


def assert_logits_close(got, want):
    """Logits (or KV entries) computed two ways agree within the tolerance the product itself trusts.

    The product's self-checks (engine/common/logits_check.py) accept a runner whose logits are within
    1e-3 in fp32; a tighter bound here fails on CPUs whose kernels sum in another order (AVX-512
    vs AVX2), and tests/engine/test_runners.py shows this bound still catches real errors.
    """
    import torch

    from gammatune_tui.engine.common.logits_check import logits_tolerance

    tol = logits_tolerance(want.dtype)
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


def emitted(events) -> list[int]:
    """The token ids a session emitted, in order (its StepEvents' emitted runs)."""
    from gammatune_tui.engine import StepEvent

    return [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]


def cache_lengths(dec) -> tuple[int, int]:
    """(target, draft) tokens a decoder's running (or last) session has cached (draft 0 for a source without a
    runner); read between the events of `generate`, each StepEvent being yielded after its step's rewind."""
    if dec.runners is None:
        return 0, 0
    return dec.runners.target.length, dec.source.length if dec.source is not None else 0


def greedy_ref(pair, ids: list[int], n: int) -> list[int]:
    """The target's own greedy continuation (`target.generate`, stopping at the pair's EOS ids): what every
    speculative session must emit at temperature 0."""
    import torch

    x = torch.tensor([ids])
    out = pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n,
                               eos_token_id=list(pair.eos_ids))
    return out[0, len(ids):].tolist()


# Each hybrid family's own config at a tiny size: 2 layers, 64 wide; what each needs beside the common fields so that
# both layers kinds (recurrent and attention) are present where the family has both.
HYBRID_EXTRA: dict[str, dict] = {
    "qwen3_5_text": dict(layer_types=["linear_attention", "full_attention"], linear_num_key_heads=2,
                         linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16, head_dim=16),
    "qwen3_next": dict(layer_types=["linear_attention", "full_attention"], linear_num_key_heads=2,
                       linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16, head_dim=16,
                       num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                       shared_expert_intermediate_size=32),
    "falcon_h1": dict(mamba_n_heads=8, mamba_d_ssm=128, mamba_n_groups=1, mamba_d_state=16, head_dim=16,
                      mamba_chunk_size=16),
    "nemotron_h": dict(layers_block_type=["mamba", "attention"], mamba_num_heads=8, mamba_head_dim=16, n_groups=1,
                       ssm_state_size=16, head_dim=16, chunk_size=16),
    "jamba": dict(attn_layer_period=2, attn_layer_offset=1, num_experts=4, expert_layer_period=2,
                  expert_layer_offset=1),
    "bamba": dict(attn_layer_indices=[1]),
    "mamba": {},
    "mamba2": dict(num_heads=8, head_dim=16, n_groups=1),
    "falcon_mamba": {},
    "recurrent_gemma": dict(block_types=["recurrent", "attention"]),
    "granitemoehybrid": dict(layer_types=["mamba", "attention"]),
    "zamba2": dict(layers_block_type=["mamba", "hybrid"]),
    "minimax": {},
}


def make_family(model_type: str, seed: int = 0, *, vocab: int = 4096, hidden: int = 64, layers: int = 2,
                extra: dict | None = None):
    """A tiny random-weight model of any transformers family (HYBRID_EXTRA: what the hybrid ones need);
    `pytest.skip` where the installed transformers lacks the family."""
    import pytest
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    kw = dict(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
              num_key_value_heads=2, intermediate_size=2 * hidden, pad_token_id=0, bos_token_id=0, eos_token_id=1,
              tie_word_embeddings=False)
    kw.update(HYBRID_EXTRA.get(model_type, {}))
    kw.update(extra or {})
    try:
        cfg = AutoConfig.for_model(model_type, **kw)
    except (KeyError, ValueError) as exc:
        if "Unrecognized" in str(exc) or isinstance(exc, KeyError):
            pytest.skip(f"this transformers has no {model_type}")
        raise
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    model.generation_config.eos_token_id = 1
    model.generation_config.bos_token_id = 0
    model.generation_config.pad_token_id = 1
    return model
