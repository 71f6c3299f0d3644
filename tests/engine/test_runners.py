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
from gammatune_tui.engine.runners.hf_compat import cache_kw
from tiny_models import assert_logits_close

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
        assert_logits_close(got, want)
        assert runner.length == pos + feed
        pos += feed
        if back is not None:
            runner.rewind(back)
            pos = back
        fresh = fresh_kv(model, tokens[:, :pos])
        for layer in range(len(fresh.layers)):
            k, v = runner.kv(layer)
            assert_logits_close(k, fresh.layers[layer].keys)
            assert_logits_close(v, fresh.layers[layer].values)
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
    assert_logits_close(got, full_logits(model, tokens[:, :first + 3])[-5:])
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
    assert_logits_close(outs[1], full_logits(model, tokens[:, :10])[-3:])


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
    assert_logits_close(out, full_logits(model, tokens[:, :8])[-3:])
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


def fake_capture(runner, log, wrong=False):
    """Stand in for torch.cuda.graph: `log` gets every (window, span) captured; `wrong` records a bad graph."""
    def capture(q, span, ids_buf, pos_buf, out_buf):
        log.append((q, span))
        step = (lambda: runner.fixed_step(ids_buf, pos_buf, span).flip(-1)) if wrong else (
            lambda: runner.fixed_step(ids_buf, pos_buf, span))
        return _FakeGraph(lambda: out_buf.copy_(step()))

    runner.capture = True
    runner.kind = "graphs"
    runner._capture = capture
    return runner


def test_every_planned_graph_is_captured_at_start_and_none_mid_answer(model, tokens):
    log: list[tuple[int, int]] = []
    runner = fake_capture(GraphRunner(model, capture=False), log)
    runner.start(300, gamma_max=3)  # capacity 512: two length buckets; windows 1 … γ_max + 1
    assert runner.capacity == 512
    assert sorted(log) == [(q, s) for q in (1, 2, 3, 4) for s in (256, 512)]
    del log[:]
    runner.forward(tokens[:, :MAX_Q + 1], 1)  # a prompt: runs uncaptured
    pos = MAX_Q + 1
    for q in (1, 2, 1, 4, 2, 1):
        got = runner.forward(tokens[:, pos:pos + q], q)
        assert_logits_close(got, full_logits(model, tokens[:, :pos + q])[-q:])
        pos += q
    assert log == [] and runner.uncaptured_steps == 0 and runner.graphs[(1, 256)].replays == 1 + 3
    # γ_max raised mid-answer: a window of 6 runs uncaptured (exact), and is captured at the next start
    got = runner.forward(tokens[:, pos:pos + 6], 6)
    assert_logits_close(got, full_logits(model, tokens[:, :pos + 6])[-6:])
    assert log == [] and runner.uncaptured_steps == 1 and runner.missed == {6}
    runner.start(300, gamma_max=3)
    assert sorted(log) == [(6, 256), (6, 512)] and not runner.missed


def test_a_step_attends_over_its_length_bucket_only(model, tokens):
    log: list[tuple[int, int]] = []
    runner = fake_capture(GraphRunner(model, capture=False), log)
    runner.start(400, gamma_max=1)
    assert all(g.replays == 1 for g in runner.graphs.values())  # each checked against the eager step once
    for g in runner.graphs.values():
        g.replays = 0
    runner.forward(tokens[:, :250], 1)
    runner.forward(tokens[:, 250:252], 2)  # ends at 252: bucket 256
    assert runner.graphs[(2, 256)].replays == 1 and runner.graphs[(2, 512)].replays == 0
    runner.forward(tokens[:, 252:254], 2)
    runner.forward(tokens[:, 254:256], 2)
    got = runner.forward(tokens[:, 256:258], 2)  # ends at 258: bucket 512
    assert runner.graphs[(2, 512)].replays == 1
    assert_logits_close(got, full_logits(model, tokens[:, :258])[-2:])


def test_growth_mid_answer_runs_uncaptured_and_recaptures_at_the_next_start(model, tokens):
    log: list[tuple[int, int]] = []
    runner = fake_capture(GraphRunner(model, capture=False), log)
    runner.start(16, gamma_max=1)
    cap = runner.capacity
    runner.forward(tokens[:, :cap - 1], 1)
    del log[:]
    got = runner.forward(tokens[:, cap - 1:cap + 1], 2)  # outgrows the buffers: the graphs pointed at the old ones
    assert_logits_close(got, full_logits(model, tokens[:, :cap + 1])[-2:])
    assert runner.capacity > cap and runner.graphs == {} and log == [] and runner.uncaptured_steps == 1
    runner.start(16, gamma_max=1)  # the next session (a chat's next turn): the grown buffers, captured again
    assert sorted(log) == [(q, s) for q in (1, 2) for s in (256, 512)]


@pytest.mark.parametrize("failure", ["raises", "wrong"])
def test_a_failed_capture_turns_static_under_auto_and_refuses_when_asked_for(model, tokens, failure):
    from gammatune_tui.errors import EngineUnavailable

    def broken(runner):
        if failure == "wrong":  # a graph that replays something else than the step: the replay check catches it
            return fake_capture(runner, [], wrong=True)
        fake_capture(runner, [])

        def boom(*a):
            raise RuntimeError("operation not permitted when stream is capturing")

        runner._capture = boom
        return runner

    notes: list[str] = []
    runner = broken(GraphRunner(model, capture=False, on_fallback=notes.append))
    runner.start(32)
    assert runner.kind == "static" and runner.graphs == {} and len(notes) == 1 and "graphs → static" in notes[0]
    got = runner.forward(tokens[:, :9], 3)
    assert_logits_close(got, full_logits(model, tokens[:, :9])[-3:])
    strict = broken(GraphRunner(model, capture=False, strict=True))
    with pytest.raises(EngineUnavailable, match="--engine graphs: capturing the step failed"):
        strict.start(32)


def test_capture_plan_covers_every_window_and_bucket():
    from gammatune_tui.engine.runners.plan import plan_captures, span_for, windows_for

    plan = plan_captures("target", 16, 1024)
    assert plan.windows == tuple(range(1, 18)) and plan.spans == (256, 512, 768, 1024) and plan.uncaptured == ()
    assert len(plan.graphs()) == 17 * 4
    assert plan_captures("draft", 16, 256).graphs() == [(1, 256), (2, 256)]
    assert plan_captures("target", 2, 256, extra_windows=(9, 70)).windows == (1, 2, 3, 9)
    assert plan_captures("target", 70, 256).uncaptured == (65, 66, 67, 68, 69, 70, 71)
    assert windows_for("target", 4) == (1, 2, 3, 4, 5)
    assert [span_for(e, 600) for e in (1, 256, 257, 512, 513, 600)] == [256, 256, 512, 512, 600, 600]


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


class _ShapeLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            self.shapes.append(tuple(out.shape))
        return out


@pytest.mark.parametrize("path", ["sdpa", "grouped"])
def test_grouped_query_attention_never_repeats_the_keys(model, tokens, monkeypatch, path):
    """4 query heads share 2 KV heads: the step is exact and (grouped path) no (heads, span, dim) K/V copy exists."""
    monkeypatch.setenv("GAMMATUNE_ATTENTION", path)
    runner = GraphRunner(model, capture=False)
    runner.start(32)
    runner.forward(tokens[:, :20], 1)
    heads, kv_heads, dim = 4, 2, runner.head_dim
    assert runner.kv_heads == kv_heads
    log = _ShapeLog()
    with torch.inference_mode(), log:
        got = runner.forward(tokens[:, 20:23], 3)
    assert_logits_close(got, full_logits(model, tokens[:, :23])[-3:])
    assert runner._fixed.attention == path
    span = 256
    assert (1, kv_heads, span, dim) in log.shapes  # the bucket's keys, as they are
    if path == "grouped":
        assert (1, heads, span, dim) not in log.shapes


def test_nothing_compiled_runs_mid_answer_outside_a_graph(model, tokens):
    """Prompts and unplanned windows run the eager body, never the compiled step (which could recompile)."""
    from gammatune_tui.engine.runners.fixed_step import FixedStep

    runner = fake_capture(GraphRunner(model, capture=False), [])
    runner._fixed = FixedStep(runner)
    compiled_calls = []
    body = runner._fixed._body
    runner._fixed._fn = lambda *a: compiled_calls.append(a[0].shape[1]) or body(*a)  # the "compiled" step
    runner.start(64, gamma_max=2)
    assert compiled_calls  # captures record the compiled step
    del compiled_calls[:]
    runner.prefill(tokens[:, :10])
    got = runner.forward(tokens[:, 10:17], 7)  # γ_max raised mid-answer: a window of 7 was not planned
    assert_logits_close(got, full_logits(model, tokens[:, :17])[-7:])
    runner.forward(tokens[:, 17:19], 2)  # a planned window: its graph replays the compiled step
    assert compiled_calls == [2] and runner.missed == {7}


def test_the_product_tolerance_still_catches_a_step_that_sees_the_wrong_keys(model, tokens):
    """The tolerance above (the product's own, 1e-3 in fp32) forgives kernels that sum in another
    order, not a runner bug: one key masked out of 258, or a window's positions off by one, fails it."""
    from gammatune_tui.engine.common.logits_check import logits_close

    ids = tokens[:, :258]
    want = full_logits(model, ids)[-2:]
    mask = torch.ones(1, 258, dtype=torch.long)
    mask[0, 100] = 0
    shifted = torch.arange(258)[None].clone()
    shifted[0, -2:] += 1
    with torch.no_grad():
        one_key_missed = model(input_ids=ids, attention_mask=mask).logits[0][-2:]
        off_by_one = model(input_ids=ids, position_ids=shifted).logits[0][-2:]
    assert logits_close(want, full_logits(model, ids)[-2:])
    assert not logits_close(want, one_key_missed)
    assert not logits_close(want, off_by_one)
    with pytest.raises(AssertionError):
        assert_logits_close(one_key_missed, want)
