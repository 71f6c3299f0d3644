"""What `--dtype auto` runs a model at on a CPU (engine/common/auto_precision.py).

What a user notices: on a CPU that multiplies bfloat16 natively a real model
runs in bfloat16 (where a verify costs little more than a step), and the
header says so and why; a small model, a CPU without native bfloat16, or an
explicit `--dtype float32` keeps float32, and nothing says anything about it.
"""

from __future__ import annotations

import pytest
import torch

from transformers import AutoModelForCausalLM

from gammatune_tui.engine.common import auto_precision
from gammatune_tui.engine.loading.model_files import ModelRef, matrix_bytes
from gammatune_tui.engine.loading.models import load_pair

pytestmark = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="this torch has no oneDNN")


def _cpu(monkeypatch, unit: str, min_bytes: int | None = None) -> None:
    """Pretend this CPU's bfloat16 unit is `unit` ('' none); with `min_bytes`, where a model counts as real."""
    monkeypatch.setattr(auto_precision, "native_bf16_unit", lambda: unit)
    if min_bytes is not None:
        monkeypatch.setattr(auto_precision, "MIN_BYTES", min_bytes)


def test_the_rule_needs_native_bfloat16_and_a_model_that_streams_from_memory(monkeypatch):
    big = auto_precision.MIN_BYTES
    _cpu(monkeypatch, "AMX")
    assert auto_precision.auto_cpu_dtype(big - 1) == (torch.float32, "")   # a small model sits in cache
    assert auto_precision.auto_cpu_dtype(None) == (torch.float32, "")      # a size not known before loading
    _cpu(monkeypatch, "AVX512-BF16")
    assert auto_precision.auto_cpu_dtype(big) == (torch.bfloat16, "auto for this CPU's AVX512-BF16")
    _cpu(monkeypatch, "")
    assert auto_precision.auto_cpu_dtype(big) == (torch.float32, "")   # emulated bfloat16 is slower


def test_the_size_is_read_from_the_checkpoints_headers(tiny_pair_dirs, tmp_path):
    t_dir, _ = tiny_pair_dirs
    model = AutoModelForCausalLM.from_pretrained(t_dir)
    matrices = sum(p.numel() * 4 for p in model.state_dict().values() if p.dim() == 2)
    assert matrix_bytes(ModelRef(str(t_dir), str(t_dir), local=True)) == matrices
    assert matrix_bytes(ModelRef("x/y", "x/y", local=False)) is None   # a hub model this load would fetch
    (tmp_path / "model.safetensors").write_bytes(b"\xff" * 16)
    assert matrix_bytes(ModelRef(str(tmp_path), str(tmp_path), local=True)) is None   # the load says why


def test_auto_loads_a_real_model_in_bfloat16_on_such_a_cpu_and_says_why(tiny_pair_dirs, monkeypatch):
    _cpu(monkeypatch, "AMX", 1)
    t_dir, d_dir = tiny_pair_dirs
    pair = load_pair(str(t_dir), draft=str(d_dir), device="cpu", threads=1, warmup=False)
    assert pair.dtype == torch.bfloat16
    assert {p.dtype for m in (pair.target, pair.draft) for p in m.parameters()} == {torch.bfloat16}
    assert pair.target.model.rotary_emb.inv_freq.dtype == torch.float32   # loaded as --dtype bfloat16 loads it
    assert pair.models()["target"]["precision"] == "bfloat16, auto for this CPU's AMX"
    own = load_pair(str(t_dir), draft="self:int4", device="cpu", threads=1, warmup=False)
    assert own.dtype == torch.bfloat16 and own.models()["draft"]["precision"] == "int4 g32"
    half = load_pair(str(t_dir), draft="self:bf16", device="cpu", threads=1, warmup=False)
    assert half.dtype == torch.float32   # a bfloat16 copy of a bfloat16 target would be the target: auto keeps float32


@pytest.mark.parametrize("how", ["float32 asked for", "no native bfloat16"])
def test_float32_stays_where_asked_for_or_where_bfloat16_is_emulated(tiny_pair_dirs, monkeypatch, how):
    _cpu(monkeypatch, "AMX" if how == "float32 asked for" else "", 1)
    t_dir, d_dir = tiny_pair_dirs
    dtype = "float32" if how == "float32 asked for" else "auto"
    pair = load_pair(str(t_dir), draft=str(d_dir), device="cpu", dtype=dtype, threads=1, warmup=False)
    assert pair.dtype == torch.float32 and pair.models()["target"]["precision"] == "float32"


def test_a_draft_model_at_a_dtype_of_its_own_keeps_it(tiny_pair_dirs, monkeypatch):
    _cpu(monkeypatch, "AMX", 1)
    t_dir, d_dir = tiny_pair_dirs
    pair = load_pair(str(t_dir), draft=str(d_dir), device="cpu", draft_dtype="float32", threads=1, warmup=False)
    assert pair.dtype == torch.bfloat16 and next(pair.draft.parameters()).dtype == torch.float32


def test_the_demo_pair_stays_float32_on_any_cpu(monkeypatch):
    _cpu(monkeypatch, "AMX")
    pair = load_pair(demo=True, device="cpu", threads=1, warmup=False)
    assert pair.dtype == torch.float32 and pair.models()["target"]["precision"] == "float32"
