"""The decoder over each runner: host reads per step, caches that grow mid-session and across chat
turns, replayed (stand-in) graphs, and the half-precision invariant: every emitted token is the
target's own argmax in the verify pass that produced it.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine import decoder as decoder_mod
from gammatune_tui.engine import drafting
from gammatune_tui.engine.loading.models import ModelPair
from gammatune_tui.engine.runners import choice, static
from tiny_models import emitted, greedy_ref

ENGINES = ["eager", "static", "graph-body"]
PROMPT = "def fib(n):\n    return"


def session(pair, method, gamma0, prompt=PROMPT, n=40, sampling=None):
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0), sampling or SamplingConfig())
    return dec, list(dec.generate(prompt, max_new_tokens=n))


@pytest.mark.parametrize("engine", ["static", "graph-body"])
@pytest.mark.parametrize("sampling", [SamplingConfig(), SamplingConfig(temperature=1.0, seed=2)],
                         ids=["greedy", "sampled"])
@pytest.mark.parametrize("method", ["specdecode", "hf-heuristic", "gammatune", "adaptive-k", "gammatune+",
                                    "assistant-threshold", "costaware"])
def test_one_read_per_step_unless_the_policy_may_stop_early(tiny_pair, monkeypatch, method, sampling, engine):
    """Device→host reads per step (issue 18, m2): one for a whole-window policy (the window comes back with
    the verdict); for a token-by-token one, one per drafted token before the window's last, plus the verdict.

    Every read goes through `host_read`; no scalar is read any other way (item/int/float)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class NoScalarReads(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            assert "_local_scalar_dense" not in str(func), "a scalar read outside host_read"
            return func(*args, **(kwargs or {}))

    reads: list[int] = []
    per_step: list[int] = []
    real = drafting.host_read
    monkeypatch.setattr(drafting, "host_read", lambda t: reads.append(t.numel()) or real(t))
    pair = dataclasses.replace(tiny_pair, engine=engine)
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, 4), sampling)
    gen = dec.generate(PROMPT, max_new_tokens=40)
    steps = []
    with NoScalarReads():
        for e in gen:   # a StepEvent comes after its step's rewind: the reads so far are its own and earlier ones'
            if isinstance(e, StepEvent):
                steps.append(e)
                per_step.append(len(reads) - sum(per_step))
    assert len(per_step) == len(steps) and any(len(e.drafted) > 1 for e in steps)
    if not dec.policy.may_stop_early:
        assert per_step == [1] * len(steps)
        assert any(n > 2 * 4 for n in reads)  # the window's ids and probabilities came back with the verdict
        return
    generated = 0
    for e, n in zip(steps, per_step):
        d = len(e.drafted)
        window = min(e.gamma, 40 - generated - 1)
        ran_to_window = 0 < d == window and not e.early_stop
        # each drafted token read before deciding on the next; the last token of a full window with the verdict
        assert n == d - ran_to_window + 1, (e.step, d, window, e.early_stop)
        generated += len(e.emitted)
    assert any(len(e.drafted) == e.gamma and not e.early_stop for e in steps)  # full windows occurred
    assert (method in ("gammatune+", "assistant-threshold", "costaware")) == dec.policy.may_stop_early


@pytest.mark.parametrize("engine", ["static", "graph-body"])
def test_caches_that_outgrow_their_buffers_mid_session_stay_exact(tiny_pair, monkeypatch, engine):
    """Buffers of 8 tokens (the prompt alone is longer): they grow during prefill and decoding."""
    monkeypatch.setattr(static, "round_capacity", lambda n: max(8, int(n)))
    real_start = static.StaticRunner.start
    monkeypatch.setattr(static.StaticRunner, "start", lambda self, capacity, gamma_max=None: real_start(self, 8))
    pair = dataclasses.replace(tiny_pair, engine=engine)
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    dec, evs = session(pair, "hf-heuristic", 3, n=60)
    assert emitted(evs) == greedy_ref(tiny_pair, ids, 60)
    assert dec.runners.target.allocations >= 3 and dec.runners.target.capacity >= len(ids) + 59


@pytest.mark.parametrize("engine", ["static", "graph-body"])
def test_a_chat_that_outgrows_the_buffers_grows_and_stays_exact(tiny_pair, engine):
    pair = dataclasses.replace(tiny_pair, engine=engine)
    dec = SpeculativeDecoder(pair, PolicySettings.build("gammatune", 4), SamplingConfig())
    short = tiny_pair.encode_prompt(PROMPT, raw=True)
    assert emitted(list(dec.generate(short, max_new_tokens=12))) == greedy_ref(tiny_pair, short, 12)
    runner = dec.runners.target
    cap, allocations = runner.capacity, runner.allocations
    long = tiny_pair.encode_prompt("x = [" + ", ".join(str(i) for i in range(80)) + "]\n", raw=True)
    assert len(long) > cap  # the next turn does not fit
    assert emitted(list(dec.generate(long, max_new_tokens=12))) == greedy_ref(tiny_pair, long, 12)
    assert dec.runners.target is runner  # the same runner, grown
    assert runner.allocations == allocations + 1 and runner.capacity >= len(long) + 12


def test_decoder_over_replayed_graphs_is_exact(tiny_pair, monkeypatch):
    """The graphs runner's capture path with a stand-in for torch.cuda.graph (what a replay does)."""
    from test_runners import fake_capture

    captured: dict[str, list[tuple[int, int]]] = {"target": [], "draft": []}
    real_build = choice.build_runner
    runners = []

    def build(kind, model, graph_pool=None, **kw):
        runner = real_build(kind, model, graph_pool, **kw)
        runners.append(runner)
        return fake_capture(runner, captured["target" if model is tiny_pair.target else "draft"])

    monkeypatch.setattr(choice, "build_runner", build)
    pair = dataclasses.replace(tiny_pair, engine="graph-body")
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    _, evs = session(pair, "gammatune+", 4, n=48)
    assert emitted(evs) == greedy_ref(tiny_pair, ids, 48)
    # everything captured when the session started, for every window its policy allows; nothing mid-answer
    assert sorted({q for q, _ in captured["draft"]}) == [1, 2]
    from gammatune_tui.engine.policies import DEFAULT_GAMMA_MAX

    assert sorted({q for q, _ in captured["target"]}) == list(range(1, DEFAULT_GAMMA_MAX + 2))  # 1 … γ_max + 1
    assert all(r.uncaptured_steps == 0 for r in runners)
    for log in captured.values():
        assert len(log) == len(set(log))


def _half_pair(tiny_pair, engine, dtype):
    target = copy.deepcopy(tiny_pair.target).to(dtype)
    draft = copy.deepcopy(tiny_pair.draft).to(dtype)
    return ModelPair(target=target, draft=draft, tokenizer=tiny_pair.tokenizer, device=torch.device("cpu"),
                     dtype=dtype, eos_ids=tiny_pair.eos_ids, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("method", ["specdecode", "gammatune+"])
def test_bf16_each_token_is_the_targets_argmax_in_its_verify_pass(tiny_pair, monkeypatch, engine, method):
    pair = _half_pair(tiny_pair, engine, torch.bfloat16)
    windows: list[torch.Tensor] = []
    real_verify = decoder_mod.verify_window

    def spy(runner, ids, draft, **kw):
        real_forward = runner.forward

        def forward(x, keep):
            out = real_forward(x, keep)
            windows.append(out.float().argmax(-1))
            return out

        runner.forward = forward
        try:
            return real_verify(runner, ids, draft, **kw)
        finally:
            del runner.forward

    monkeypatch.setattr(decoder_mod, "verify_window", spy)
    _, evs = session(pair, method, 4, n=40)
    steps = [e for e in evs if isinstance(e, StepEvent)]
    assert len(windows) == len(steps) and steps[0].drafted
    for step, argmax in zip(steps, windows):
        # row i of the verify pass is the target's law after the accepted prefix plus i drafts
        assert [t.id for t in step.emitted] == argmax[: len(step.emitted)].tolist()
    assert any(e.accepted < len(e.drafted) for e in steps)  # corrections happened, not only bonuses
    assert evs[-1].tokens == 40


def test_header_names_the_runner_and_old_recordings_still_load(tiny_pair):
    from gammatune_tui.engine.events import EventFormatError, event_from_json

    _, evs = session(dataclasses.replace(tiny_pair, engine="graph-body"), "specdecode", 2, n=3)
    data = evs[0].to_json()
    assert (data["engine"], data["runner"]) == ("graph-body", "graph-body")
    assert event_from_json(data) == evs[0]
    old = {k: v for k, v in data.items() if k not in ("engine", "runner", "warmup_s")} | {"schema": 1}  # before runners
    back = event_from_json(old)
    assert (back.engine, back.runner, back.warmup_s) == ("", "", 0.0)
    with pytest.raises(EventFormatError, match="warmup_s"):
        event_from_json({**data, "warmup_s": -1})
