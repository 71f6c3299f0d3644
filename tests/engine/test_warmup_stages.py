"""Warm-up with a graphs runner (capture stood in for on the CPU): the capture is a loading stage of its own,
every planned graph exists before the first session, and that session captures nothing more."""

from __future__ import annotations

import dataclasses

from test_runners import fake_capture

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.policies import DEFAULT_GAMMA_MAX
from gammatune_tui.engine.runners import choice
from gammatune_tui.engine.loading.warmup import warm_up


def test_capture_is_its_own_stage_and_the_first_session_finds_every_graph(tiny_pair, monkeypatch):
    logs: dict[str, list] = {"target": [], "draft": []}
    real_build = choice.build_runner

    def build(kind, model, graph_pool=None, **kw):
        runner = real_build(kind, model, graph_pool, **kw)
        return fake_capture(runner, logs[kw.get("role", "target")])

    monkeypatch.setattr(choice, "build_runner", build)
    pair = dataclasses.replace(tiny_pair, engine="graph-body")
    stages: list[str] = []
    warm_up(pair, progress=lambda stage, frac: stages.append(stage))
    assert stages[0] == "capture" and stages[-1] == "warm-up" and set(stages[1:-1]) == {"capture"}
    # the bar moves with every graph captured: target windows 1 … γ_max + 1 and the draft's 1, 2, four buckets each
    assert len(stages) == 2 + (DEFAULT_GAMMA_MAX + 1) * 4 + 2 * 4
    timings = pair.runner_pool.timings
    assert timings["capture_s"] > 0 and timings["warmup_s"] >= timings["capture_s"] and "self_check_s" in timings
    assert len(logs["target"]) == (DEFAULT_GAMMA_MAX + 1) * 4 and len(logs["draft"]) == 2 * 4  # capacity 1024
    before = {k: len(v) for k, v in logs.items()}
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig(temperature=0.7, seed=1))
    assert any(isinstance(e, StepEvent) for e in dec.generate("def f(x):", max_new_tokens=24))
    assert {k: len(v) for k, v in logs.items()} == before  # nothing captured at or during the first session
    assert dec.runners.target.uncaptured_steps == 0 and dec.runners.draft.uncaptured_steps == 0
