"""The runners alone: each one's cache and logits equal the model's own forward, through chunks,
rewinds and growth; rejected tokens stay invisible; the graphs runner's step never reads back to
the host, and its capture bookkeeping (one graph per window length, re-captured after growth)
works with a stand-in for `torch.cuda.graph` on the CPU.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from transformers import DynamicCache

from gammatune_tui.engine.runners import (
    MAX_Q, EagerRunner, GraphRunner, StaticRunner, build_runner,
)
from gammatune_tui.engine.hf_compat import cache_kw

KINDS = ["eager", "static", "graph-body"]
VOCAB = 259


@pytest.fixture(scope="module")
def model():
    from tiny_models import make_llama

    return make_llama(VOCAB, seed=1, init=1.0)


@pytest.fixture(scope="module")
def tokens():
    return torch.randint(0, VOCAB, (1, 400), generator=torch.Generator().manual_seed(3))


def full_logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits[0]


def fresh_kv(model, ids):
    cache = DynamicCache()
    with torch.no_grad():
        model(input_ids=ids, **cache_kw(model, cache), use_cache=True)
    return cache


@pytest.mark.parametrize("kind", KINDS)
def test_logits_and_cache_match_the_model_through_chunks_and_rewinds(model, tokens, kind):
    runner = build_runner(kind, model)
    runner.start(64)
    pos = 0
    # (feed, keep, rewind-to afterwards): a prompt, windows of several lengths, rejected tails
    for feed, keep, back in ((7, 1, None), (1, 1, None), (5, 5, 9), (4, 4, 10), (1, 1, None), (3, 2, 12)):
        ids = tokens[:, pos:pos + feed]
        got = runner.forward(ids, keep)
        want = full_logits(model, tokens[:, :pos + feed])[-keep:]
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        assert runner.length == pos + feed
        pos += feed
        if back is not None:
            runner.rewind(back)
            pos = back
        fresh = fresh_kv(model, tokens[:, :pos])
        for layer in range(len(fresh.layers)):
            k, v = runner.kv(layer)
            torch.testing.assert_close(k, fresh.layers[layer].keys, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(v, fresh.layers[layer].values, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError):
        runner.rewind(runner.length + 1)
    runner.start(64)  # a new session starts empty
    assert runner.length == 0


@pytest.mark.parametrize("kind", ["static", "graph-body"])
def test_a_session_that_outgrows_its_buffers_grows_and_stays_exact(model, tokens, kind):
    runner = build_runner(kind, model)
    runner.start(16)
    first = runner.capacity
    assert first >= 16 and runner.allocations == 1
    runner.forward(tokens[:, :first - 2], 1)
    got = runner.forward(tokens[:, first - 2:first + 3], 5)  # crosses the end of the buffers
    assert runner.capacity > first and runner.allocations == 2
    torch.testing.assert_close(got, full_logits(model, tokens[:, :first + 3])[-5:], rtol=1e-4, atol=1e-4)
    runner.start(8)  # enough room: the grown buffers are kept
    assert runner.allocations == 2 and runner.length == 0


@pytest.mark.parametrize("kind", ["static", "graph-body"])
def test_rejected_tokens_never_reach_attention(model, tokens, kind):
    """Whatever sits in the buffers past the length (rejected drafts, garbage) changes no logit."""
    outs = []
    for poison in (False, True):
        runner = build_runner(kind, model)
        runner.start(32)
        runner.forward(tokens[:, :6], 1)
        runner.forward(tokens[:, 6:10], 4)  # a window of 4 …
        runner.rewind(7)  # … of which 1 was accepted
        if poison:
            g = torch.Generator().manual_seed(0)
            for lay in runner.cache.kv_layers:
                for buf in (lay.k, lay.v):
                    buf[:, :, 7:] = torch.randn(buf[:, :, 7:].shape, generator=g) * 1e4
        outs.append(runner.forward(tokens[:, 7:10], 3))
    assert torch.equal(outs[0], outs[1])
    torch.testing.assert_close(outs[1], full_logits(model, tokens[:, :10])[-3:], rtol=1e-4, atol=1e-4)


class _NoHostReads(TorchDispatchMode):
    """Fails on every op that reads a tensor's value back to the host or has a data-dependent shape."""

    BANNED = ("_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique", "repeat_interleave",
              "item", "equal", "is_nonzero")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name.split("::")[-1]
        if name in self.BANNED:
            raise AssertionError(f"host read inside the captured step: {func}")
        return func(*args, **(kwargs or {}))


def test_the_captured_step_never_reads_back_to_the_host(model, tokens):
    runner = GraphRunner(model, capture=False)
    runner.start(32)
    runner.forward(tokens[:, :5], 1)
    q = 3
    runner._ids[:, :q].copy_(tokens[:, 5:8])
    runner._pos[:q].copy_(runner.cache.key_pos[5:8])
    with torch.inference_mode(), _NoHostReads():
        out = runner.fixed_step(runner._ids[:, :q], runner._pos[:q])
    torch.testing.assert_close(out, full_logits(model, tokens[:, :8])[-3:], rtol=1e-4, atol=1e-4)
    with pytest.raises(AssertionError, match="host read"), _NoHostReads():  # the guard does catch one
        bool(out.sum() > 0)


class _FakeGraph:
    """What a captured CUDA graph does: re-run the recorded step over the same static buffers."""

    def __init__(self, fn):
        self.fn = fn
        self.replays = 0

    def replay(self):
        self.replays += 1
        self.fn()


def fake_capture(runner, log):
    def capture(q, ids_buf, pos_buf, out_buf):
        log.append(q)
        graph = _FakeGraph(lambda: out_buf.copy_(runner.fixed_step(ids_buf, pos_buf)))
        runner.graphs[q] = graph
        return graph

    runner.capture = True
    runner._capture = capture
    return runner


def test_one_graph_per_window_length_recaptured_after_growth(model, tokens):
    log: list[int] = []
    runner = fake_capture(GraphRunner(model, capture=False), log)
    runner.start(16)
    cap = runner.capacity
    runner.forward(tokens[:, :MAX_Q + 1], 1)  # a prefill longer than MAX_Q runs uncaptured
    pos = MAX_Q + 1
    assert log == []
    for q in (1, 2, 1, 3, 2, 1):
        got = runner.forward(tokens[:, pos:pos + q], q)
        torch.testing.assert_close(got, full_logits(model, tokens[:, :pos + q])[-q:], rtol=1e-4, atol=1e-4)
        pos += q
    assert log == [1, 2, 3]  # captured on first use, replayed afterwards
    assert runner.graphs[1].replays == 3
    runner.forward(tokens[:, pos:cap + 2], 1)  # outgrow the buffers: the graphs pointed at the old ones
    pos = cap + 2
    assert runner.graphs == {}
    got = runner.forward(tokens[:, pos:pos + 2], 2)
    assert log == [1, 2, 3, 2]
    torch.testing.assert_close(got, full_logits(model, tokens[:, :pos + 2])[-2:], rtol=1e-4, atol=1e-4)


def test_graphs_runner_refuses_a_cpu_capture(model):
    with pytest.raises(ValueError, match="CUDA"):
        GraphRunner(model, capture=True)


def test_build_runner_kinds(model):
    assert isinstance(build_runner("eager", model), EagerRunner)
    assert type(build_runner("static", model)) is StaticRunner
    body = build_runner("graph-body", model)
    assert isinstance(body, GraphRunner) and not body.capture and body.kind == "graph-body"
    with pytest.raises(ValueError):
        build_runner("turbo", model)
