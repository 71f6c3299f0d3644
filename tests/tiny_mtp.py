"""Tiny random-weight checkpoints that carry an MTP head, written as real safetensors folders.

The head's decoder layer is made as the family makes its own: a target one
layer deeper is built and saved by transformers (so the layer's tensors have
the checkpoint's names, MoE experts one by one), and that extra layer is then
moved under the family's MTP names (mtp_layouts.py) beside the head's own
norms and projection, and the config says one layer fewer plus the head's
fields. `train_head` fits such a head for a few seconds on its target's own
greedy text, so acceptance is high and a wiring error shows.
"""

from __future__ import annotations

import json
from pathlib import Path

from tiny_models import make_byte_tokenizer, make_family

# config fields of each family's fixture: a real MTP head config, tiny
FAMILIES: dict[str, dict] = {
    "qwen3_5_text": dict(mtp_num_hidden_layers=1),
    "mellum": dict(num_mtp_layers=1),
    "deepseek_v3": dict(num_mtp_layers=1, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                        n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32,
                        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, n_group=1, topk_group=1,
                        num_key_value_heads=4),
}
VOCAB = 260   # the byte tokenizer's 259 tokens fit: the folders run from the command line too


def _head_names(family: str, n: int) -> dict[str, str]:
    """MtpLayer part → the family's checkpoint prefix (n: the target's layer count)."""
    if family == "deepseek_v3":
        p = f"model.layers.{n}."
        return {"block": p, "enorm": p + "enorm.", "hnorm": p + "hnorm.", "eh_proj": p + "eh_proj.",
                "post_norm": p + "shared_head.norm."}
    return {"block": "mtp.layers.0.", "enorm": "mtp.pre_fc_norm_embedding.", "hnorm": "mtp.pre_fc_norm_hidden.",
            "eh_proj": "mtp.fc.", "post_norm": "mtp.norm."}


def write_mtp_checkpoint(family: str, folder: Path, seed: int = 0, *, layers: int = 2, hidden: int = 64,
                         init: float = 0.3, with_head: bool = True, vocab: int = VOCAB):
    """Write a tiny `family` checkpoint with an MTP head to `folder` (without one: `with_head=False`); returns
    the target, loaded back from the folder. A byte tokenizer is saved beside it when `vocab` holds one."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM

    folder = Path(folder)
    extra = {**FAMILIES[family], "initializer_range": init}
    if family == "qwen3_5_text":
        extra["layer_types"] = (["linear_attention", "full_attention"] * layers)[:layers] + ["full_attention"]
    if family == "mellum":   # as the real one: sliding and full layers, a sliding-window head layer
        extra["layer_types"] = (["sliding_attention", "full_attention"] * layers)[:layers] + ["sliding_attention"]
        extra["mlp_layer_types"] = ["sparse"] * (layers + 1)
    deeper = make_family(family, seed, vocab=vocab, hidden=hidden, layers=layers + 1, extra=extra)
    deeper.save_pretrained(folder)
    state = load_file(str(folder / "model.safetensors"))
    names = _head_names(family, layers)
    out: dict[str, torch.Tensor] = {}
    block = f"model.layers.{layers}."
    gen = torch.Generator().manual_seed(seed + 1)
    for key, t in state.items():
        if key.startswith(block):
            if with_head:
                out[names["block"] + key[len(block):]] = t
        else:
            out[key] = t
    if with_head:
        norm = state[block + "input_layernorm.weight"]
        out[names["enorm"] + "weight"] = norm.clone()
        out[names["hnorm"] + "weight"] = norm.clone()
        out[names["post_norm"] + "weight"] = norm.clone()
        out[names["eh_proj"] + "weight"] = torch.randn(hidden, 2 * hidden, generator=gen) * init / 2
    save_file(out, str(folder / "model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((folder / "config.json").read_text())
    cfg["num_hidden_layers"] = layers
    if "layer_types" in cfg:
        cfg["layer_types"] = cfg["layer_types"][:layers]
    if family == "mellum":
        cfg["mlp_layer_types"] = cfg["mlp_layer_types"][:layers]
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    if vocab >= VOCAB:
        make_byte_tokenizer().save_pretrained(folder)
    target = AutoModelForCausalLM.from_pretrained(folder).eval()
    target.generation_config.eos_token_id = 1
    target.generation_config.pad_token_id = 1
    return target
