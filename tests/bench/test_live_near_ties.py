"""bench's live sweep: a greedy difference from target-only is a near-tie (bf16/fp16) or a fault (issue 42).

Before, every difference was counted in `outputs_differing_from_target_only` and the warning called them all
"float near-ties", in float32 too; now a near-tie is listed apart and only a real difference is a fault."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from gammatune_tui.bench.live.protocol import _judge


def _checks():
    return {"outputs_differing_from_target_only": [], "near_ties": []}


def test_bf16_near_tie_listed_apart():
    checks = _checks()
    ref, ids = [1, 2, 3, 4], [1, 2, 9, 4]
    _judge(checks, SimpleNamespace(dtype=torch.bfloat16), ref, [(20.0, 1.0)] * 2 + [(20.0, 0.05)] * 2, ids,
           ["specdecode", 4, "p0", 0])
    assert checks["outputs_differing_from_target_only"] == []
    assert checks["near_ties"] == [["specdecode", 4, "p0", 0, 2, "bfloat16", 0.05, 1.0]]


def test_fp32_and_wide_bf16_differences_are_faults():
    checks = _checks()
    ref, ids = [1, 2, 3, 4], [1, 2, 9, 4]
    _judge(checks, SimpleNamespace(dtype=torch.float32), ref, [(20.0, 0.05)] * 4, ids, ["specdecode", 4, "p0", 0])
    _judge(checks, SimpleNamespace(dtype=torch.bfloat16), ref, [(20.0, 3.0)] * 4, ids, ["gammatune", 4, "p0", 0])
    assert checks["outputs_differing_from_target_only"] == [["specdecode", 4, "p0", 0], ["gammatune", 4, "p0", 0]]
    assert checks["near_ties"] == []
