"""The fixed step under torch.compile: one graph, no breaks (so `fullgraph=True` holds), and its switches.

Compiling itself is left to the GPU (it is off by default on the CPU: GAMMATUNE_COMPILE=auto); what a
CPU proves is that dynamo traces the whole step of the tiny pair's models as one graph.
"""

from __future__ import annotations

import os

import pytest
import torch

from gammatune_tui.engine.runners import GraphRunner
from gammatune_tui.engine.runners.fixed_step import attention_path, compile_wanted, inductor_cache_dir
from gammatune_tui.errors import InvalidParameter

CPU, CUDA = torch.device("cpu"), torch.device("cuda", 0)


@pytest.mark.parametrize("which", ["target", "draft"])
@pytest.mark.parametrize("q", [1, 5])
def test_dynamo_sees_the_step_as_one_graph(tiny_pair, which, q):
    runner = GraphRunner(getattr(tiny_pair, which), capture=False)
    runner.start(32)
    runner.forward(torch.arange(2, 9).view(1, -1), 1)
    ids = torch.arange(10, 10 + q).view(1, -1)
    pos = runner.cache.key_pos[7:7 + q]
    with torch.inference_mode():
        explained = torch._dynamo.explain(runner._fixed._body)(ids, pos, runner.cache.key_pos[:256])
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1


def test_compile_is_on_for_cuda_only_unless_asked(monkeypatch):
    monkeypatch.delenv("GAMMATUNE_COMPILE", raising=False)
    assert compile_wanted(CUDA) and not compile_wanted(CPU)
    assert not compile_wanted(CUDA, captured=False)  # the uncaptured step (graph-body, self-checks) stays eager
    monkeypatch.setenv("GAMMATUNE_COMPILE", "0")
    assert not compile_wanted(CUDA)
    monkeypatch.setenv("GAMMATUNE_COMPILE", "1")
    assert compile_wanted(CPU)
    monkeypatch.setenv("GAMMATUNE_COMPILE", "maybe")
    with pytest.raises(InvalidParameter, match="GAMMATUNE_COMPILE must be auto, 1 or 0"):
        compile_wanted(CPU)


def test_attention_switch(monkeypatch):
    monkeypatch.delenv("GAMMATUNE_ATTENTION", raising=False)
    assert attention_path() == "sdpa"  # torch 2.13 has enable_gqa
    monkeypatch.setenv("GAMMATUNE_ATTENTION", "grouped")
    assert attention_path() == "grouped"
    monkeypatch.setenv("GAMMATUNE_ATTENTION", "flash")
    with pytest.raises(InvalidParameter, match="sdpa or grouped"):
        attention_path()


def test_compiled_artifacts_live_in_gammatunes_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path))
    assert inductor_cache_dir() == str(tmp_path / "inductor") == os.environ["TORCHINDUCTOR_CACHE_DIR"]
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/elsewhere")
    assert inductor_cache_dir() == "/elsewhere"  # the user's own setting wins
