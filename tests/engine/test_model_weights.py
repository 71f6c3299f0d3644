"""One answer to "did optimum-quanto quantize this model?", and every room that asks gets it (issue 25 item 7).

The check was written four times (the runners' grad mode, their CUDA-graph
refusal, the fast forward's inference_mode choice, the self-draft's refusal);
a model whose Linear layers live in an `optimum.quanto` module must be seen
as quantized by each of them, and a plain model by none.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from gammatune_tui.engine.common.model_weights import model_bytes, model_precision, quanto_quantized, weight_bytes
from gammatune_tui.engine.drafting.self_draft import build_self_draft
from gammatune_tui.engine.runners.base import grad_mode
from gammatune_tui.engine.runners.choice import graphs_unsupported
from gammatune_tui.engine.runners.fast_forward import make_forward
from gammatune_tui.errors import InvalidParameter

# a stand-in for optimum.quanto's QLinear: only the module it lives in marks it
QLinear = type("QLinear", (nn.Linear,), {"__module__": "optimum.quanto.nn.qlinear"})


def _model(linear: type) -> nn.Module:
    return nn.Sequential(nn.Embedding(8, 4), linear(4, 8))


def test_a_quanto_model_is_seen_as_quantized_by_every_room():
    q, plain = _model(QLinear), _model(nn.Linear)
    assert quanto_quantized(q) and not quanto_quantized(plain)
    assert grad_mode(q) is torch.no_grad and grad_mode(plain) is torch.inference_mode
    # the eager runner's forward enters the same mode
    assert make_forward(q).__qualname__.endswith("[no_grad]")
    assert make_forward(plain).__qualname__.endswith("[inference_mode]")
    assert "not captured in CUDA graphs" in graphs_unsupported(q, torch.device("cuda"))
    assert graphs_unsupported(plain, torch.device("cuda")) is None
    with pytest.raises(InvalidParameter, match="--quantize already"):
        build_self_draft(q, "self:int8")


def test_precision_and_bytes_in_words():
    plain = _model(nn.Linear)
    assert model_precision(plain) == "float32"
    assert model_precision(plain, "int8") == "int8 (quanto)"
    assert model_bytes(plain) == weight_bytes(plain) == (8 * 4 + 4 * 8 + 8) * 4
