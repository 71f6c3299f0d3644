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
