"""`engine=`: what auto picks, what an impossible request says, and how runners are lent to sessions."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gammatune_tui.engine.runners import runner_pool
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.loading.models import ModelPair
from gammatune_tui.engine.runners import RunnerPool, check_engine, choice, choose_kind
from gammatune_tui.errors import EngineUnavailable, InvalidParameter

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def gpt2():
    """An architecture the static runners do not support (same 259-id vocabulary as tiny_pair)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(5)
    cfg = GPT2Config(vocab_size=259, n_positions=512, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
                     eos_token_id=1)
    return GPT2LMHeadModel(cfg).eval()


def test_engine_names():
    for name in ("auto", "eager", "static", "graphs"):
        assert check_engine(name, internal=False) == name
    assert check_engine("graph-body") == "graph-body"  # Python API only
    with pytest.raises(InvalidParameter, match="auto, eager, static, graphs"):
        check_engine("graph-body", internal=False)
    with pytest.raises(InvalidParameter, match="unknown engine 'fast'"):
        check_engine("fast")


def test_auto_and_explicit_choices_on_cpu(tiny_pair, gpt2):
    llama = tiny_pair.target
    assert choose_kind("auto", llama, CPU) == "static"
    assert choose_kind("eager", llama, CPU) == "eager"
    assert choose_kind("static", llama, CPU) == "static"
    with pytest.raises(EngineUnavailable, match="--engine graphs: CUDA graphs need a CUDA device"):
        choose_kind("graphs", llama, CPU)
    assert choose_kind("auto", gpt2, CPU) == "eager"  # auto falls back silently …
    for engine in ("static", "graphs"):  # … a runner asked for by name does not
        with pytest.raises(EngineUnavailable, match="GPT2LMHeadModel is not supported by the static runners"):
            choose_kind(engine, gpt2, CPU)


def test_a_failed_self_check_falls_back_under_auto_only(tiny_pair, monkeypatch):
    monkeypatch.setattr(choice, "self_check", lambda kind, model: False)
    assert RunnerPool(tiny_pair.target, tiny_pair.draft, "auto").kinds() == ("eager", "eager")
    with pytest.raises(EngineUnavailable, match="does not reproduce"):
        RunnerPool(tiny_pair.target, tiny_pair.draft, "static").kinds()


def test_the_self_check_can_fail(tiny_pair, monkeypatch):
    """A step that computes something else than the model (here: logits reversed) is caught."""
    assert choice.self_check("static", tiny_pair.target)
    wrong = choice.StaticRunner.prefix_step
    monkeypatch.setattr(choice.StaticRunner, "prefix_step", lambda self, *a: wrong(self, *a).flip(-1))
    assert not choice.self_check("static", tiny_pair.target)
    assert choice.self_check("graph-body", tiny_pair.target)  # its own step is untouched


def test_mixed_pair_names_both_runners_and_stays_exact(tiny_pair, gpt2):
    """A Llama target with a GPT-2 draft: static for one, eager for the other, output still the target's."""
    pair = ModelPair(target=tiny_pair.target, draft=gpt2, tokenizer=tiny_pair.tokenizer, device=CPU,
                     dtype=torch.float32, eos_ids=tiny_pair.eos_ids)
    assert runner_pool(pair).label == "static/eager"
    ids = tiny_pair.encode_prompt("def f(x):", raw=True)
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig())
    evs = list(dec.generate(ids, max_new_tokens=24))
    assert evs[0].runner == "static/eager" and evs[0].engine == "auto"
    x = torch.tensor([ids])
    ref = tiny_pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=24,
                                    eos_token_id=list(tiny_pair.eos_ids))[0, len(ids):].tolist()
    assert [t.id for e in evs if isinstance(e, StepEvent) for t in e.emitted] == ref
    with pytest.raises(EngineUnavailable):
        runner_pool(dataclasses.replace(pair, engine="static")).label


def test_sessions_borrow_runners_one_at_a_time(tiny_pair):
    pool = RunnerPool(tiny_pair.target, tiny_pair.draft, "static")
    a = pool.acquire()
    b = pool.acquire()  # a second session while the first runs: its own runners
    assert a.target is not b.target and a.draft is not b.draft
    pool.release(a)
    assert pool.acquire() is a  # the next session reuses the warm ones


def test_sequential_sessions_reuse_the_same_runners(tiny_pair):
    pair = dataclasses.replace(tiny_pair, engine="static")
    seen = []
    for _ in range(2):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), SamplingConfig())
        for ev in dec.generate("ab", max_new_tokens=4):
            if isinstance(ev, StepEvent):
                seen.append(dec.runners.target)
    assert all(r is seen[0] for r in seen)


@pytest.mark.parametrize("kind", ["static", "graph-body"])
def test_the_self_check_runs_the_model_once(tiny_pair, kind):
    """Loading pays for one model forward and a few runner passes per model (issue 19 row 4), not a replay."""
    calls = []
    hook = tiny_pair.target.register_forward_hook(lambda mod, args, out: calls.append(1))
    try:
        assert choice.self_check(kind, tiny_pair.target)
    finally:
        hook.remove()
    assert len(calls) == 1


def test_the_pool_times_its_self_checks(tiny_pair):
    pool = RunnerPool(tiny_pair.target, tiny_pair.draft, "auto")
    pool.kinds()
    assert pool.timings["self_check_s"] > 0


@pytest.mark.parametrize("rope", ["longrope", "dynamic"])
def test_rope_variants_the_static_step_does_not_run_are_refused(tiny_pair, monkeypatch, rope):
    """Their table is recomputed from the positions seen: auto runs eager, a named runner is one line (exit 2)."""
    monkeypatch.setattr(tiny_pair.target.model.rotary_emb, "rope_type", rope)
    # only the rope type is patched, not the config fields longrope reads, so the model's own forward may fail
    # (transformers 5.17 does) and the eager load check would rightly refuse it: the choice is what is tested here
    monkeypatch.setattr(choice, "eager_refusal", lambda model: None)
    assert choose_kind("auto", tiny_pair.target, CPU) == "eager"
    for engine in ("static", "graph-body"):
        with pytest.raises(EngineUnavailable, match=f"rope scaling '{rope}'"):
            choose_kind(engine, tiny_pair.target, CPU)
    assert RunnerPool(tiny_pair.target, tiny_pair.draft, "auto").kinds() == ("eager", "static")


def test_a_graphs_runner_that_fell_back_makes_the_pool_lend_static(tiny_pair):
    pool = RunnerPool(tiny_pair.target, tiny_pair.draft, "static")
    pool.kinds()
    pool._kinds = ("graph-body", "graph-body")
    pool._fell_back("target", "graphs → static: capturing the step failed (test)")
    assert pool.kinds() == ("static", "graph-body") and pool.fallback_note.startswith("graphs → static")


@pytest.mark.parametrize("engine", ["auto", "graphs"])
def test_a_capture_that_fails_in_a_session(tiny_pair, monkeypatch, engine):
    """auto: the session runs on, exact, on static runners, and says why once; --engine graphs: one clear line."""
    from test_runners import fake_capture

    real_build = choice.build_runner

    def build(kind, model, graph_pool=None, **kw):
        runner = fake_capture(real_build("graph-body", model, None, **kw), [])
        runner.strict, runner.on_fallback = kw.get("strict", False), kw.get("on_fallback")

        def boom(*a):
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

        runner._capture = boom
        return runner

    monkeypatch.setattr(choice, "build_runner", build)
    monkeypatch.setattr(choice, "choose_kind", lambda e, model, device: "graphs")
    monkeypatch.setattr(choice, "self_check", lambda kind, model: True)
    monkeypatch.setattr(torch.cuda, "graph_pool_handle", lambda: None)
    pair = dataclasses.replace(tiny_pair, engine=engine)
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig())
    ids = tiny_pair.encode_prompt("def f(x):", raw=True)
    if engine == "graphs":
        with pytest.raises(EngineUnavailable, match="^--engine graphs: capturing the step failed on this GPU"):
            list(dec.generate(ids, max_new_tokens=16))
        return
    evs = list(dec.generate(ids, max_new_tokens=16))
    x = torch.tensor([ids])
    ref = tiny_pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=16,
                                    eos_token_id=list(tiny_pair.eos_ids))[0, len(ids):].tolist()
    assert [t.id for e in evs if isinstance(e, StepEvent) for t in e.emitted] == ref
    pool = pair.runner_pool
    assert pool.kinds() == ("static", "static") and pool.label == "static"
    assert pool.fallback_note.startswith("graphs → static: capturing the step failed (CUDA error")
