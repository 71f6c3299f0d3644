"""Tiny DFlash drafters (transformers' `muse_glimmer_assistant`) for a tiny target, written as real safetensors
folders as a downloaded drafter would be: config.json (its own model type, the target's hidden size, the target
layers it reads, the block size and mask token) and model.safetensors. Random weights, or (`train_dflash`) weights
fitted for seconds on the target's own greedy text."""

from __future__ import annotations

from pathlib import Path


def write_dflash(folder, target, *, layer_ids=(0, 1), block_size: int = 4, mask_token_id: int = 3, seed: int = 0,
                 init: float = 0.3, layers: int = 1, **extra) -> Path:
    """A DFlash drafter for `target` in `folder`; `extra` config fields over the defaults (e.g. hidden_size for a
    drafter that does not fit)."""
    import torch
    from transformers import MuseGlimmerAssistantConfig, MuseGlimmerAssistantModel

    t = target.config
    cfg = MuseGlimmerAssistantConfig(
        hidden_size=t.hidden_size, intermediate_size=2 * t.hidden_size, num_hidden_layers=layers,
        num_attention_heads=t.num_attention_heads, num_key_value_heads=t.num_key_value_heads,
        head_dim=t.hidden_size // t.num_attention_heads, max_position_embeddings=1024, sliding_window=512,
        layer_types=["full_attention"] * layers, block_size=block_size, mask_token_id=mask_token_id,
        target_layer_ids=list(layer_ids), initializer_range=init, bos_token_id=None, eos_token_id=None,
        pad_token_id=None, **extra)
    torch.manual_seed(seed)
    model = MuseGlimmerAssistantModel(cfg).eval()
    root = Path(folder)
    model.save_pretrained(root)
    return root


def train_dflash(target, root, prompts, *, steps: int = 200, new: int = 40, lr: float = 3e-3) -> Path:
    """The drafter in `root` fitted for a few seconds on `target`'s own greedy continuations of `prompts`, as it is
    fed live: for every anchor position a, the context is the target's rows of positions 0 … a − 1 at the drafter's
    `target_layer_ids` (transformers' `hidden_states[id + 1]`: the last layer's after the final norm), the block is
    [token a, mask × (block_size − 1)] at positions a …, and position i of the block learns token a + i through the
    target's own LM head. So a wiring error (the pre-norm row, the wrong depth, rows one position off) collapses
    its acceptance. All anchors go as one batch, the shorter contexts padded and masked; seeded, so the same weights
    come out of every run on one machine."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(root))
    cfg = model.config
    size, layers = int(cfg.block_size), [int(i) for i in cfg.target_layer_ids]
    items = []
    with torch.no_grad():
        for prompt in prompts:
            x = torch.tensor([prompt])
            s = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=new)[0]
            rows = target(input_ids=s[None], output_hidden_states=True).hidden_states
            ctx = torch.cat([rows[i + 1][0] for i in layers], -1)
            items += [(ctx[:a], s[a:a + size]) for a in range(len(prompt) - 1, len(s) - size + 1)]
        n, width = len(items), max(len(c) for c, _ in items)
        context = torch.zeros(n, width, items[0][0].shape[-1])
        mask = torch.zeros(n, width + size, dtype=torch.long)
        pos = torch.zeros(n, width + size, dtype=torch.long)
        block = torch.full((n, size), int(cfg.mask_token_id))
        for k, (c, toks) in enumerate(items):
            a = len(c)
            context[k, :a], mask[k, :a], mask[k, width:] = c, 1, 1
            pos[k, :a], pos[k, width:] = torch.arange(a), torch.arange(a, a + size)
            block[k, 0] = toks[0]
        labels = torch.stack([toks[1:] for _, toks in items]).reshape(-1)
        noise = target.get_input_embeddings()(block)
        head = target.get_output_embeddings().weight
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    torch.manual_seed(0)
    for _ in range(steps):
        out = model(noise_embeds=noise, context_hidden_states=context, attention_mask=mask,
                    position_ids=pos).last_hidden_state
        loss = torch.nn.functional.cross_entropy((out[:, 1:] @ head.T).reshape(len(labels), -1), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval().save_pretrained(root)
    return Path(root)


def as_zlab(folder, out, *, version: int = 1, **dflash) -> Path:
    """The DFlash drafter in `folder` (transformers' format) rewritten in z-lab's own (z-lab/dflash, dflash/model.py):
    a Qwen3 config with architectures ["DFlashDraftModel"] (["DFlash2DraftModel"] for `version` 2), the drafter's
    fields under dflash_config (`dflash`: more of them, e.g. output_multiplier), and its context projection's
    tensors as `fc` and `hidden_norm`."""
    import json

    from safetensors.torch import load_file, save_file

    src, root = Path(folder), Path(out)
    root.mkdir(parents=True, exist_ok=True)
    cfg = json.loads((src / "config.json").read_text())
    inner = {k: cfg.pop(k) for k in ("target_layer_ids", "mask_token_id")}
    cfg.update(model_type="qwen3", architectures=["DFlash2DraftModel" if version == 2 else "DFlashDraftModel"],
               auto_map={"AutoModel": "dflash.DFlashDraftModel"}, is_causal=False,
               num_target_layers=max(inner["target_layer_ids"]) + 1, dflash_config={**inner, **dflash})
    (root / "config.json").write_text(json.dumps(cfg))
    names = {"encoder.fc.": "fc.", "encoder.output_norm_enc.": "hidden_norm."}
    state = {next((new + k[len(old):] for old, new in names.items() if k.startswith(old)), k): v
             for k, v in load_file(str(src / "model.safetensors")).items()}
    save_file(state, str(root / "model.safetensors"))
    return root
