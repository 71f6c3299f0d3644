"""Tiny random-weight EAGLE-3 heads written in the two formats users download, from their configs and key names.

* SafeAILab/EAGLE's: a Llama config with `architectures: ["LlamaForCausalLMEagle3"]` and `draft_vocab_size`;
  tensors `fc.weight`, `midlayer.*` (hidden_norm, input_layernorm, self_attn.{q,k,v,o}_proj with q/k/v reading
  2 × hidden, post_attention_layernorm, mlp.{gate,up,down}_proj), `norm.weight`, `lm_head.weight`, `d2t`, `t2d`;
  no `embed_tokens.weight` (the target's embeddings are used), as yuhuili's checkpoints ship.
* vLLM's speculators format: `speculators_model_type: "eagle3"`, `architectures: ["Eagle3Speculator"]`, the
  layer under `transformer_layer_config`, `norm_before_residual`, `eagle_aux_hidden_state_layer_ids`,
  `speculators_config` naming the verifier; tensors under `layers.0.` and an `embed_tokens.weight`.
"""

from __future__ import annotations

import json
from pathlib import Path


def head_tensors(target, draft_ids, *, seed: int = 0, std: float = 0.3, embed: bool = False):
    """A random head's tensors for `target` (SafeAILab's key names), drafting over the target ids `draft_ids`."""
    import torch

    cfg = target.config
    h, inter, heads, kv = cfg.hidden_size, cfg.intermediate_size, cfg.num_attention_heads, cfg.num_key_value_heads
    hd = h // heads
    g = torch.Generator().manual_seed(seed)

    def w(*shape):
        return torch.randn(*shape, generator=g) * std

    ids = torch.tensor(sorted(draft_ids))
    t = {
        "fc.weight": w(h, 3 * h),
        "midlayer.hidden_norm.weight": torch.ones(h),
        "midlayer.input_layernorm.weight": torch.ones(h),
        "midlayer.post_attention_layernorm.weight": torch.ones(h),
        "midlayer.self_attn.q_proj.weight": w(heads * hd, 2 * h),
        "midlayer.self_attn.k_proj.weight": w(kv * hd, 2 * h),
        "midlayer.self_attn.v_proj.weight": w(kv * hd, 2 * h),
        "midlayer.self_attn.o_proj.weight": w(h, heads * hd),
        "midlayer.mlp.gate_proj.weight": w(inter, h),
        "midlayer.mlp.up_proj.weight": w(inter, h),
        "midlayer.mlp.down_proj.weight": w(h, inter),
        "norm.weight": torch.ones(h),
        "lm_head.weight": w(len(ids), h),
        "d2t": ids - torch.arange(len(ids)),
        "t2d": torch.zeros(cfg.vocab_size, dtype=torch.bool).index_fill_(0, ids, True),
    }
    if embed:
        t["embed_tokens.weight"] = target.get_input_embeddings().weight.detach().clone()
    return t


def _layer_config(target) -> dict:
    cfg = target.config
    return {"model_type": "llama", "hidden_size": cfg.hidden_size, "intermediate_size": cfg.intermediate_size,
            "num_attention_heads": cfg.num_attention_heads, "num_key_value_heads": cfg.num_key_value_heads,
            "num_hidden_layers": 1, "rms_norm_eps": cfg.rms_norm_eps, "hidden_act": "silu",
            "max_position_embeddings": cfg.max_position_embeddings, "vocab_size": cfg.vocab_size,
            "tie_word_embeddings": False}


def write_head(folder, target, tensors: dict, fmt: str = "safeailab", layer_ids=None) -> Path:
    """The head's folder in format `fmt` ("safeailab" or "speculators"): config.json and model.safetensors."""
    from safetensors.torch import save_file

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    draft_vocab = int(tensors["lm_head.weight"].shape[0])
    if fmt == "safeailab":
        cfg = {"architectures": ["LlamaForCausalLMEagle3"], **_layer_config(target), "draft_vocab_size": draft_vocab,
               "torch_dtype": "float32"}
        if layer_ids is not None:
            cfg["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": list(layer_ids), "use_aux_hidden_state": True}
        state = dict(tensors)
    else:
        cfg = {"architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3",
               "speculators_version": "0.2.0", "transformer_layer_config": _layer_config(target),
               "draft_vocab_size": draft_vocab, "norm_before_residual": False,
               "target_hidden_size": target.config.hidden_size,
               "speculators_config": {"algorithm": "eagle3", "default_proposal_method": "greedy",
                                      "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
                                      "verifier": {"name_or_path": "tiny", "architectures": ["LlamaForCausalLM"]}}}
        if layer_ids is not None:
            cfg["eagle_aux_hidden_state_layer_ids"] = list(layer_ids)
        state = {("layers.0." + k[len("midlayer."):] if k.startswith("midlayer.") else k): v
                 for k, v in tensors.items()}
        if "embed_tokens.weight" not in state:
            state["embed_tokens.weight"] = target.get_input_embeddings().weight.detach().clone()
    (root / "config.json").write_text(json.dumps(cfg, indent=1))
    save_file({k: v.contiguous() for k, v in state.items()}, str(root / "model.safetensors"))
    return root


def trained_head(target, prompts: list[list[int]], draft_ids, folder, *, layer_ids=(1, 2, 3), new_tokens: int = 40,
                 steps: int = 100, seed: int = 0) -> tuple[Path, float]:
    """An EAGLE-3 head fitted for seconds on the target's own greedy continuations of `prompts` and written in
    SafeAILab's format: at every position t, from the target's rows at `layer_ids` and the token x_{t+1}, the
    token x_{t+2} over the draft vocabulary `draft_ids` (positions whose x_{t+2} is outside it are skipped).
    Returns (folder, final training agreement)."""
    import torch

    from gammatune_tui.engine.drafting.eagle3_head import Eagle3Head, HeadCache, read_spec

    data = []
    with torch.no_grad():
        for p in prompts:
            x = torch.tensor([p])
            seq = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=new_tokens,
                                  eos_token_id=None, pad_token_id=1)
            hs = target(seq, output_hidden_states=True).hidden_states
            data.append((torch.cat([hs[d][0] for d in layer_ids], dim=-1)[:-2], seq[0]))
    if draft_ids is None:   # the ids the target's own text uses (FR-Spec's frequent tokens): d2t is not the identity
        draft_ids = sorted({int(t) for _, seq in data for t in seq})
    root = write_head(folder, target, head_tensors(target, draft_ids, seed=seed, std=0.1), "safeailab", layer_ids)
    head = Eagle3Head(target, read_spec(root))
    to_draft = {int(t): d for d, t in enumerate(head.to_target.tolist())}
    rows = [(feat, seq[1:-1], torch.tensor([to_draft.get(int(t), -100) for t in seq[2:]])) for feat, seq in data]
    params = [p for n, p in head.named_parameters() if not n.startswith("embed.")]
    opt = torch.optim.Adam(params, lr=3e-3)
    torch.manual_seed(seed)
    head.train()
    agree = 0.0
    for _ in range(steps):
        loss = torch.zeros(())
        hits = total = 0
        for feat, nxt, label in rows:
            out = head.step(feat, nxt, HeadCache(), 0)
            logits = head.lm_head(head.norm(out))
            loss = loss + torch.nn.functional.cross_entropy(logits, label, ignore_index=-100)
            keep = label >= 0
            hits += int((logits.argmax(-1)[keep] == label[keep]).sum())
            total += int(keep.sum())
        opt.zero_grad()
        loss.backward()
        opt.step()
        agree = hits / max(total, 1)
    head.eval()
    state = {}
    for k, v in head.state_dict().items():
        if k.startswith(("embed.", "rotary.")) or k == "to_target":
            continue
        k = "midlayer." + k[len("layer."):] if k.startswith("layer.") else k
        k = "midlayer." + k if k.startswith("hidden_norm.") else k
        state[k] = v.detach().clone()
    ids = head.to_target
    state["d2t"] = ids - torch.arange(len(ids))
    state["t2d"] = torch.zeros(target.config.vocab_size, dtype=torch.bool).index_fill_(0, ids, True)
    write_head(folder, target, state, "safeailab", layer_ids)
    return Path(folder), agree
