"""On a CUDA device (skipped without one): every runner, the captured graphs included, stays exact.

The CPU tests prove everything but `torch.cuda.graph` itself; this file runs
the same checks with real graph capture: greedy output equals
`target.generate` in float32 for every policy, and in bfloat16 every emitted
token is the target's own argmax in the verify pass that produced it.
"""

from __future__ import annotations

import copy

import pytest
import torch

from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.models import ModelPair

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
PROMPT = "def fib(n):\n    return"


def cuda_pair(tiny_pair, engine, dtype):
    dev = torch.device("cuda")
    return ModelPair(target=copy.deepcopy(tiny_pair.target).to(dev, dtype),
                     draft=copy.deepcopy(tiny_pair.draft).to(dev, dtype), tokenizer=tiny_pair.tokenizer, device=dev,
                     dtype=dtype, eos_ids=tiny_pair.eos_ids, engine=engine)


@pytest.mark.parametrize("engine", ["eager", "static", "graphs"])
@pytest.mark.parametrize("method", METHODS)
def test_fp32_greedy_equals_target_generate_on_cuda(tiny_pair, method, engine):
    pair = cuda_pair(tiny_pair, engine, torch.float32)
    assert pair.runner == engine
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    x = torch.tensor([ids], device="cuda")
    ref = pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=48,
                               eos_token_id=list(pair.eos_ids))[0, len(ids):].tolist()
    for gamma0 in (1, 4):
        dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0), SamplingConfig())
        evs = list(dec.generate(ids, max_new_tokens=48))
        assert [t.id for e in evs if isinstance(e, StepEvent) for t in e.emitted] == ref
    if engine == "graphs":
        assert dec.runners.target.graphs and dec.runners.draft.graphs  # replays, not eager passes


def test_bf16_graphs_emit_the_targets_own_argmax(tiny_pair, monkeypatch):
    from gammatune_tui.engine import decoder as decoder_mod

    pair = cuda_pair(tiny_pair, "graphs", torch.bfloat16)
    windows = []
    real_verify = decoder_mod.verify_window

    def spy(runner, ids, draft, **kw):
        real_forward = runner.forward
        runner.forward = lambda x, keep: windows.append(real_forward(x, keep)) or windows[-1]
        try:
            return real_verify(runner, ids, draft, **kw)
        finally:
            del runner.forward

    monkeypatch.setattr(decoder_mod, "verify_window", spy)
    dec = SpeculativeDecoder(pair, PolicySettings.build("gammatune+", 4), SamplingConfig())
    steps = [e for e in dec.generate(PROMPT, max_new_tokens=40) if isinstance(e, StepEvent)]
    assert len(windows) == len(steps)
    for step, logits in zip(steps, windows):
        assert [t.id for t in step.emitted] == logits.float().argmax(-1)[: len(step.emitted)].tolist()
