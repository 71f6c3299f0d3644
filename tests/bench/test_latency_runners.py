"""bench/live/latency.py: the runner dimension and the bandwidth fields of a Table 1 row."""

from __future__ import annotations

import math

import pytest

from gammatune_tui.bench.live import latency as lat
from gammatune_tui.errors import EngineUnavailable, InvalidParameter

TINY = {"model_type": "llama", "hidden_act": "silu", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300,
        "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "tie_word_embeddings": False}


@pytest.mark.parametrize("runner", ["transformers", "eager", "static"])
def test_measure_each_runner(runner):
    row = lat.measure("tiny", TINY, "cpu", "float32", context=32, ks=(1, 3), repeats=1, runner=runner, copy_gbs=10.0)
    assert row.runner == runner and row.decode_ms > 0 and set(row.verify_ms) == {1, 3}
    model = lat.build_model(TINY, "cpu", "float32")
    weights = sum(p.numel() * 4 for p in model.parameters())
    kv = 2 * 2 * 2 * 16 * 32 * 4  # K and V × layers × kv heads × head dim × context × 4 bytes
    assert row.step_bytes == weights + kv
    assert math.isclose(row.decode_gbs, row.step_bytes / (row.decode_ms / 1000) / 1e9)
    assert math.isclose(row.bandwidth_pct, 100 * row.decode_gbs / 10.0)
    data = row.to_json()
    assert data["runner"] == runner and data["copy_gbs"] == 10.0


def test_measure_refuses_runners_it_cannot_run():
    with pytest.raises(InvalidParameter, match="unknown runner"):
        lat.measure("tiny", TINY, "cpu", runner="turbo")
    with pytest.raises(EngineUnavailable, match="CUDA graphs need a CUDA device"):
        lat.measure("tiny", TINY, "cpu", ks=(1,), repeats=1, runner="graphs")


def test_copy_bandwidth_is_a_positive_rate():
    assert lat.copy_bandwidth("cpu", mib=8, repeats=2) > 0
