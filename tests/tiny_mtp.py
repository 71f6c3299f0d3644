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
    # GLM-4.7-Flash's shape (glm4_moe_lite): MLA attention and routed experts, the head at model.layers.N
    "glm4_moe_lite": dict(num_nextn_predict_layers=1, n_routed_experts=4, num_experts_per_tok=2,
                          moe_intermediate_size=32, n_shared_experts=1, kv_lora_rank=16, q_lora_rank=32,
                          qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, num_key_value_heads=4),
}
VOCAB = 260   # the byte tokenizer's 259 tokens fit: the folders run from the command line too


def runs_heads() -> bool:
    """Whether this transformers' MtpModel runs one head layer alone (5.24 does; the oldest supported refuses
    `--draft mtp` in one line)."""
    from transformers.modeling_layers import MtpModel

    return hasattr(MtpModel, "forward_layer")


def _head_names(family: str, n: int) -> dict[str, str]:
    """MtpLayer part → the family's checkpoint prefix (n: the target's layer count)."""
    if family in ("deepseek_v3", "glm4_moe_lite"):
        p = f"model.layers.{n}."
        return {"block": p, "enorm": p + "enorm.", "hnorm": p + "hnorm.", "eh_proj": p + "eh_proj.",
                "post_norm": p + "shared_head.norm."}
    return {"block": "mtp.layers.0.", "enorm": "mtp.pre_fc_norm_embedding.", "hnorm": "mtp.pre_fc_norm_hidden.",
            "eh_proj": "mtp.fc.", "post_norm": "mtp.norm."}


def write_mtp_checkpoint(family: str, folder: Path, seed: int = 0, *, layers: int = 2, hidden: int = 64,
                         init: float = 0.3, with_head: bool = True, vocab: int = VOCAB, shape: dict | None = None):
    """Write a tiny `family` checkpoint with an MTP head to `folder` (without one: `with_head=False`); returns
    the target, loaded back from the folder. A byte tokenizer is saved beside it when `vocab` holds one.
    `shape`: config fields over the tiny ones (benchmarks/mtp_step.py writes a real model's shape)."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM

    folder = Path(folder)
    extra = {**FAMILIES[family], "initializer_range": init, **(shape or {})}
    if family == "qwen3_5_text" and "layer_types" not in extra:
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
    if family in ("mellum", "glm4_moe_lite"):
        cfg["mlp_layer_types"] = cfg["mlp_layer_types"][:layers]
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    if vocab >= VOCAB:
        make_byte_tokenizer().save_pretrained(folder)
    target = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.get_default_dtype()).eval()
    target.generation_config.eos_token_id = 1
    target.generation_config.pad_token_id = 1
    return target


def train_head(target, head, prompts: list[list[int]], *, new_tokens: int = 40, steps: int = 200, seed: int = 0):
    """Fit `head` (an MtpHead of `target`) for a few seconds on the target's own greedy continuations of
    `prompts`: at every position t, from the target's post-norm state h_t and the token x_{t+1}, the token
    x_{t+2} — what a released head learned from its model. Returns the final training agreement."""
    import torch

    torch.manual_seed(seed)
    rows = []
    with torch.no_grad():
        for p in prompts:
            x = torch.tensor([p])
            seq = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=new_tokens,
                                  eos_token_id=None, pad_token_id=1)
            h = target(seq, output_hidden_states=True).hidden_states[-1][0]   # after the final norm
            rows.append((h[:-2].clone(), seq[0, 1:-1].clone(), seq[0, 2:].clone()))
    model = head.model
    params = [p for n, p in model.named_parameters() if n.startswith("layers.")]
    opt = torch.optim.Adam(params, lr=3e-3)
    model.train()
    agree = 0.0
    for _ in range(steps):
        loss = torch.zeros(())
        hits = total = 0
        for h, nxt, label in rows:
            pos = torch.arange(1, len(nxt) + 1).unsqueeze(0)
            out = model.forward_layer(0, h.unsqueeze(0), pos, None, input_ids=nxt.unsqueeze(0))
            logits = model._project_to_logits(out)[0]
            loss = loss + torch.nn.functional.cross_entropy(logits, label)
            hits += int((logits.argmax(-1) == label).sum())
            total += len(label)
        opt.zero_grad()
        loss.backward()
        opt.step()
        agree = hits / total
    model.eval()
    return agree
