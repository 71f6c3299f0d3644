"""Tiny random-weight DFlash drafters (transformers' `muse_glimmer_assistant`) for a tiny target, written as real
safetensors folders as a downloaded drafter would be: config.json (its own model type, the target's hidden size,
the target layers it reads, the block size and mask token) and model.safetensors."""

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
