"""The transformers model families gammatune is checked against, their tiny configs, and what the check found.

Why one module: three things must agree — the family matrix that decodes a
tiny random model of each family on every draft path (tests/families/family_matrix.py,
run by tests/families/), the table in docs/models.md, and `gammatune models`,
which tells a user whether their model's family decodes exactly, is refused,
or was never tried. The families and their configs are declared here; what
the matrix found is kept beside them in family_support.json (written by the
matrix script, never by hand), so the command needs no torch run to answer.

A tiny config is the family's own config class with every size cut to two
layers, 64 wide, the demo tokenizer's 4,096 ids, and — for hybrids — one
layer of each kind, so a model builds in well under a second and still runs
every code path its family has (a recurrent layer and an attention layer,
routed experts, MLA's low-rank projections).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..common.names import SOURCES

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel

ATTENTION, MOE, HYBRID, STATE_SPACE = "attention", "mixture of experts", "hybrid", "state space"
MATRIX_SELF_DRAFTS = ("self:int8", "self:int4")
_COLUMNS = tuple(s.matrix_column for s in SOURCES if s.matrix_column)
PATHS: tuple[str, ...] = (_COLUMNS[0], *MATRIX_SELF_DRAFTS, *_COLUMNS[1:], "hf.generate")
"""The ways a family is decoded, derived from the draft sources' rows (engine/common/names.py `matrix_column`):
a same-family draft model (the default source's column), the target's own int8 and int4 copies, every other
source that has a column of its own (prompt lookup; the MTP head, "n/a" for a family that ships none), and
transformers' `generate` with gammatune behind it (`gammatune_tui.hf.generate`)."""

SUPPORT_FILE = Path(__file__).with_name("family_support.json")
_DROP = object()   # a key the family's config must not be given (Falcon's head_dim is derived, not settable)

COMMON: dict[str, Any] = dict(
    vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, max_position_embeddings=512, tie_word_embeddings=False,
    bos_token_id=0, eos_token_id=1, pad_token_id=1, initializer_range=0.2,
    # experts, for the families that route: four small ones, two per token
    num_experts=4, num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
    shared_expert_intermediate_size=64, n_routed_experts=4, n_shared_experts=1,
)
_MLA = dict(num_key_value_heads=4, kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16,
            first_k_dense_replace=1, n_group=1, topk_group=1)
_GATED_DELTA = dict(layer_types=["linear_attention", "full_attention"], linear_key_head_dim=16,
                    linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4)
_MAMBA2 = dict(mamba_n_heads=8, mamba_d_head=16, mamba_d_state=16, mamba_chunk_size=16)


@dataclass(frozen=True)
class Family:
    """A transformers `model_type`, what kind of layers it has, and what its tiny config changes from COMMON."""

    name: str
    kind: str
    config: dict[str, Any] = field(default_factory=dict)


FAMILIES: tuple[Family, ...] = (
    *(Family(n, ATTENTION) for n in (
        "llama", "mistral", "ministral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi", "phi3",
        "gpt2", "gpt_neox", "gpt_bigcode", "opt", "bloom", "stablelm", "olmo2", "olmo3", "granite", "cohere2",
        "starcoder2", "smollm3", "glm4", "exaone4", "ernie4_5", "hunyuan_v1_dense", "seed_oss", "apertus")),
    Family("falcon", ATTENTION, {"head_dim": _DROP, "new_decoder_architecture": True, "num_kv_heads": 2}),
    Family("gemma4_text", ATTENTION, {"vocab_size_per_layer_input": 4096, "hidden_size_per_layer_input": 16,
                                      "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 64,
                                      "global_head_dim": 16, "per_layer_config": {}}),
    Family("gemma3n_text", ATTENTION, {"vocab_size_per_layer_input": 4096, "hidden_size_per_layer_input": 16,
                                       "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 64,
                                       "num_kv_shared_layers": 0, "activation_sparsity_pattern": [0.0, 0.0],
                                       "laurel_rank": 8, "altup_num_inputs": 2}),
    *(Family(n, MOE) for n in ("qwen2_moe", "qwen3_moe", "mixtral", "gpt_oss", "phimoe", "llama4_text",
                               "granitemoe", "olmoe", "glm4_moe", "ernie4_5_moe", "hunyuan_v1_moe")),
    Family("deepseek_v2", MOE, {**_MLA, "head_dim": _DROP}),
    Family("deepseek_v3", MOE, {**_MLA, "head_dim": 8}),
    Family("dbrx", MOE, {"d_model": 64, "n_heads": 4, "n_layers": 2,
                         "attn_config": {"kv_n_heads": 2, "rope_theta": 10000, "clip_qkv": 8},
                         "ffn_config": {"ffn_hidden_size": 128, "moe_num_experts": 4, "moe_top_k": 2}}),
    Family("lfm2", HYBRID),
    Family("lfm2_moe", HYBRID, {"layer_types": ["conv", "full_attention"], "num_dense_layers": 1}),
    Family("minimax", HYBRID, {"layer_types": ["linear_attention", "full_attention"], "block_size": 16}),
    Family("qwen3_5_text", HYBRID, _GATED_DELTA),
    Family("qwen3_5_moe_text", HYBRID, _GATED_DELTA),
    Family("qwen3_next", HYBRID, _GATED_DELTA),
    Family("kimi_linear", HYBRID, {"layer_types": ["linear_attention", "full_attention"], "num_key_value_heads": 4,
                                   "mlp_layer_types": ["dense", "sparse"], "qk_rope_head_dim": 8,
                                   "qk_nope_head_dim": 8, "v_head_dim": 16, "linear_head_dim": 16,
                                   "linear_num_heads": 4, "num_experts_per_token": 2, "kv_lora_rank": 32,
                                   "q_lora_rank": None}),
    Family("falcon_h1", HYBRID, {"mamba_n_heads": 8, "mamba_d_ssm": 128, "mamba_n_groups": 1, "mamba_d_state": 16,
                                 "mamba_chunk_size": 16}),
    Family("nemotron_h", HYBRID, {"layers_block_type": ["mamba", "attention"], "mamba_num_heads": 8,
                                  "mamba_head_dim": 16, "ssm_state_size": 16, "n_groups": 1, "chunk_size": 16,
                                  "moe_shared_expert_intermediate_size": 64}),
    Family("jamba", HYBRID, {"attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2,
                             "expert_layer_offset": 1, "mamba_d_state": 8, "mamba_dt_rank": 8,
                             "use_mamba_kernels": False}),
    Family("bamba", HYBRID, {"attn_layer_indices": [1], **_MAMBA2, }),
    Family("granitemoehybrid", HYBRID, {"layer_types": ["linear_attention", "full_attention"],
                                        "shared_intermediate_size": 64, **_MAMBA2}),
    Family("zamba", HYBRID, {"layers_block_type": ["mamba", "hybrid"], "attn_layer_period": 2,
                             "attn_layer_offset": 1, "mamba_d_state": 16, "n_mamba_heads": 2,
                             "use_mamba_kernels": False}),
    Family("zamba2", HYBRID, {"layers_block_type": ["mamba", "hybrid"], "hybrid_layer_ids": [1],
                              "mamba_d_state": 16, "n_mamba_heads": 2, "mamba_headdim": 64,
                              "attention_head_dim": 32, "num_key_value_heads": 4, "use_mamba_kernels": False}),
    Family("recurrent_gemma", HYBRID, {"block_types": ["recurrent", "attention"], "attention_window_size": 64,
                                       "num_key_value_heads": 4, "lru_width": 64}),
    Family("mamba", STATE_SPACE),
    Family("mamba2", STATE_SPACE, {"num_heads": 8, "head_dim": 16, "state_size": 16, "n_groups": 1,
                                   "chunk_size": 16}),
    Family("falcon_mamba", STATE_SPACE),
    Family("rwkv", STATE_SPACE),
    Family("xlstm", STATE_SPACE, {"num_blocks": 2, "num_heads": 4, "embedding_dim": 64, "qk_dim_factor": 1.0,
                                  "v_dim_factor": 1.0, "mode": "inference"}),
)
BY_NAME = {f.name: f for f in FAMILIES}


def installed(name: str) -> bool:
    """Whether the installed transformers has this family (older releases lack the newer ones)."""
    from transformers import CONFIG_MAPPING

    return name in CONFIG_MAPPING


def tiny_config(name: str, vocab_size: int = 4096, **overrides: Any) -> PretrainedConfig:
    """The family's own config class, cut to the tiny sizes above (and `overrides`)."""
    from transformers import AutoConfig

    kw = {**COMMON, "vocab_size": vocab_size, **BY_NAME[name].config, **overrides}
    return AutoConfig.for_model(name, **{k: v for k, v in kw.items() if v is not _DROP})


def tiny_model(name: str, seed: int = 0, vocab_size: int = 4096, **overrides: Any) -> PreTrainedModel:
    """A random-weight causal LM of the family (float32, eval mode), seeded, built in memory."""
    import torch
    from transformers import AutoModelForCausalLM

    config = tiny_config(name, vocab_size, **overrides)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config).eval()
    gen = model.generation_config
    gen.bos_token_id, gen.eos_token_id, gen.pad_token_id = config.bos_token_id, config.eos_token_id, config.pad_token_id
    return model


@lru_cache(maxsize=1)
def support() -> dict[str, Any]:
    """What the family matrix found: {"transformers": version, "families": {name: {path: cell}}}.

    A cell is "exact", or a one-line reason ("refused: …", "differs: …", "error: …");
    a family the matrix skipped has {"skipped": reason}. Empty when the file is missing.
    """
    try:
        return json.loads(SUPPORT_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"transformers": None, "families": {}}


def verdict(name: str) -> str:
    """A family in a few words: exact (every path), refused (every path, in one line), partly exact,
    fails (no path exact), or untested (not in the matrix, or skipped by it)."""
    cells = support()["families"].get(name)
    if not cells or "skipped" in cells:
        return "untested"
    values = [cells.get(p, "") for p in PATHS if not cells.get(p, "").startswith("n/a")]   # a family without heads
    if all(v == "exact" for v in values):
        return "exact"
    if all(v.startswith("refused") for v in values):
        return "refused"
    return "partly exact" if "exact" in values else "fails"


def applicable(name: str) -> list[str]:
    """The paths that apply to a family: every one but a head it does not ship ("n/a" cells)."""
    cells = support()["families"].get(name) or {}
    return [p for p in PATHS if not str(cells.get(p, "")).startswith("n/a")]


def not_exact(name: str) -> dict[str, str]:
    """{path: cell} for the paths on which the family is not exact (the reason, in one line)."""
    cells = support()["families"].get(name) or {}
    return {p: cells[p] for p in PATHS if p in cells and cells[p] != "exact" and not cells[p].startswith("n/a")}


__all__ = ["Family", "FAMILIES", "BY_NAME", "PATHS", "ATTENTION", "MOE", "HYBRID", "STATE_SPACE",
           "installed", "tiny_config", "tiny_model", "support", "verdict", "applicable", "not_exact"]
