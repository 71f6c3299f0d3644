"""Which model families ship a multi-token-prediction head gammatune reads, and in which checkpoint layout.

Torch-free, so `gammatune models --families` can say which families carry
heads without importing the engine (engine/drafting/mtp_layouts.py reads the
tensors; docs/heads.md shows each layout).
"""

from __future__ import annotations

# model_type (the text config's) → layout: "mtp" (mtp.fc, mtp.layers.0 …), "layers" (model.layers.N+i …),
# "mimo" (model.mtp_layers.i …)
FAMILY_LAYOUT: dict[str, str] = {
    "qwen3_5": "mtp", "qwen3_5_text": "mtp", "qwen3_5_moe": "mtp", "qwen3_5_moe_text": "mtp",
    "qwen3_next": "mtp", "mellum": "mtp",
    "deepseek_v3": "layers", "glm4_moe": "layers", "glm4_moe_lite": "layers",
    "mimo": "mimo",
}
# Families whose heads (and models) need indexed sparse attention, a cache class of their own: refused.
INDEXED_ATTENTION: tuple[str, ...] = ("deepseek_v32", "glm_moe_dsa", "deepseek_v4")


def head_families() -> list[str]:
    """The families `--draft mtp` reads, each once (a text config's `_text` twin folded in)."""
    return sorted({k.removesuffix("_text") for k in FAMILY_LAYOUT})
