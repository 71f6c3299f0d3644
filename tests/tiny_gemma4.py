"""A tiny random-weight Gemma 4 text target and Gemma 4 assistants for it (transformers' `gemma4_assistant`),
written as real safetensors folders as a downloaded assistant would be: config.json (its model type, the target's
width as `backbone_hidden_size`, its own small text stack) and model.safetensors."""

from __future__ import annotations

from pathlib import Path

VOCAB = 260   # the byte tokenizer's
HEAD = 16     # head size of every layer (sliding and full)


def make_gemma4(seed: int = 2, *, shared: int = 1, init: float = 1.0, vocab: int = VOCAB):
    """A three-layer Gemma 4 text model (sliding, full, full: the last is always full), the last `shared` layers reusing the keys of the
    ones before (as E2B's do), 64 wide, over the byte tokenizer's ids (seed 2, init 1.0: a varied greedy text)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model(
        "gemma4_text", vocab_size=vocab, vocab_size_per_layer_input=vocab, hidden_size_per_layer_input=16,
        hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
        head_dim=HEAD, global_head_dim=HEAD, layer_types=["sliding_attention", "full_attention", "full_attention"],
        sliding_window=64, num_kv_shared_layers=shared, per_layer_config={}, initializer_range=init,
        pad_token_id=0, bos_token_id=0, eos_token_id=1, tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    model.generation_config.eos_token_id = 1
    model.generation_config.bos_token_id = 0
    model.generation_config.pad_token_id = 1
    return model


def write_assistant(folder, target, *, seed: int = 0, centroids: int = 0, init: float = 0.5, gamma: int = 3,
                    hidden: int = 32, layers: int = 2, top_k: int = 0, **extra) -> Path:
    """An assistant for `target` in `folder`: `layers` layers (sliding, then one full) `hidden` wide reading the
    target's store layers; `centroids` > 0 for the ordered-embeddings head (E2B's; `top_k` of them active,
    default a quarter); `extra` fields of the assistant's config (e.g. backbone_hidden_size for one that does
    not fit); `gamma`: transformers' fixed num_assistant_tokens."""
    import torch
    from transformers import AutoConfig, Gemma4AssistantConfig, Gemma4AssistantForCausalLM

    t = target.config
    sliding = t.per_layer_config[t.layer_types.index("sliding_attention")]   # head sizes may differ per layer
    text = AutoConfig.for_model(
        "gemma4_text", vocab_size=t.vocab_size, vocab_size_per_layer_input=0, hidden_size_per_layer_input=0,
        hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers, num_attention_heads=4,
        num_key_value_heads=sliding.num_key_value_heads, head_dim=sliding.head_dim,
        global_head_dim=t.per_layer_config[t.layer_types.index("full_attention")].head_dim,
        layer_types=["sliding_attention"] * (layers - 1) + ["full_attention"], sliding_window=t.sliding_window,
        num_kv_shared_layers=layers, initializer_range=init, pad_token_id=0, bos_token_id=0,
        eos_token_id=1)
    cfg = Gemma4AssistantConfig(text_config=text, **{
        "backbone_hidden_size": t.hidden_size, "use_ordered_embeddings": centroids > 0,
        "num_centroids": max(centroids, 1), "centroid_intermediate_top_k": top_k or max(centroids // 4, 1), **extra})
    torch.manual_seed(seed)
    model = Gemma4AssistantForCausalLM(cfg).eval()
    if centroids:   # a token order: each centroid owns VOCAB / centroids of the ids, shuffled
        model.masked_embedding.token_ordering.copy_(torch.randperm(t.vocab_size))
    model.generation_config.num_assistant_tokens = gamma
    root = Path(folder)
    model.save_pretrained(root)
    return root


def train_assistant(target, root, prompts, *, steps: int = 150, new: int = 40) -> Path:
    """The assistant in `root` trained for a few seconds on `target`'s own greedy continuations of `prompts`, as
    the head is fed live: at each position p, [embedding of token p ; the target's normed row at p − 1] over the
    target's keys of positions 0 … p − 1, to predict token p + 1. So a wiring error (the wrong row, keys one
    position off) collapses its acceptance. All positions of a text go as one batch, padded keys masked."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(root))
    batches = []
    with torch.no_grad():
        for prompt in prompts:
            x = torch.tensor([prompt])
            s = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=new)[0]
            out = target(input_ids=s[None], output_hidden_states=True, return_shared_kv_states=True, use_cache=False)
            row, emb = out.hidden_states[-1][0], target.get_input_embeddings()(s[None])[0]
            p = torch.arange(1, len(s) - 1)
            kv = {k: (v[0].expand(len(p), -1, -1, -1), v[1].expand(len(p), -1, -1, -1))
                  for k, v in out.shared_kv_states.items()}
            mask = (torch.arange(len(s) + 1)[None] < p[:, None]).long()
            batches.append((torch.cat([emb[p], row[p - 1]], -1)[:, None], p[:, None], kv, mask, s[p + 1]))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    torch.manual_seed(0)
    for _ in range(steps):
        loss = sum(torch.nn.functional.cross_entropy(
            model(inputs_embeds=i, position_ids=pos, shared_kv_states=kv, attention_mask=m).logits[:, 0].float(), y)
            for i, pos, kv, m, y in batches)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval().save_pretrained(root)
    return root
