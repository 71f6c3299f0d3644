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

from gammatune_tui.engine.runners import runner_pool
from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.loading.models import ModelPair

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
    assert runner_pool(pair).label == engine
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


def test_bf16_graphs_emit_what_an_independent_fp32_target_prefers(tiny_pair):
    """Each emitted token is the argmax of the target's own forward over the finished text (transformers'
    forward, no cache, no runner, no graph), up to a bf16 rounding tie: a reference the run did not produce
    itself (issue 18, m4; the old test compared the run's logits with themselves)."""
    pair = cuda_pair(tiny_pair, "graphs", torch.bfloat16)
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    dec = SpeculativeDecoder(pair, PolicySettings.build("gammatune+", 4), SamplingConfig())
    out = [t.id for e in dec.generate(ids, max_new_tokens=40) if isinstance(e, StepEvent) for t in e.emitted]
    with torch.no_grad():  # transformers' own forward of the bf16 target over the whole text: no cache, no runner
        logits = pair.target(input_ids=torch.tensor([ids + out], device="cuda")).logits[0].float()
    for i, tok in enumerate(out):
        row = logits[len(ids) - 1 + i]
        tol = 3e-2 * max(1.0, float(row.abs().max()))
        assert float(row[tok]) >= float(row.max()) - tol, f"token {i}: {tok} is not the target's choice"
    assert dec.runners.target.uncaptured_steps == 0


def test_fp32_graphs_stay_exact_across_buckets_and_growth_between_turns(tiny_pair):
    """Prompts that cross a 256-token bucket mid-answer and then outgrow the buffers at the next turn's start:
    every step replays a graph captured at start (none mid-answer), output = target.generate."""
    pair = cuda_pair(tiny_pair, "graphs", torch.float32)
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig())
    for text in ("x = [" + ", ".join(str(i) for i in range(60)) + "]\n",   # ≈ 240 tokens: crosses 256
                 "y = [" + ", ".join(str(i) for i in range(200)) + "]\n"):  # ≈ 800: grows at start
        ids = tiny_pair.encode_prompt(text, raw=True)
        x = torch.tensor([ids], device="cuda")
        ref = pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=48,
                                   eos_token_id=list(pair.eos_ids))[0, len(ids):].tolist()
        evs = list(dec.generate(ids, max_new_tokens=48))
        assert [t.id for e in evs if isinstance(e, StepEvent) for t in e.emitted] == ref
        runner = dec.runners.target
        assert runner.capacity >= len(ids) + 48 and runner.uncaptured_steps == 0
    assert runner.allocations >= 2 and any(span > 512 for _, span in runner.graphs)


# -- sampled sessions on CUDA through the public entry points (issue 18, B1) ---------------------------

def _pair_kwargs(tiny_pair_dirs, **kw):
    t, d = tiny_pair_dirs
    return {"target": str(t), "draft": str(d), "device": "cuda", "dtype": "float32", **kw}


@pytest.mark.parametrize("engine", ["auto", "static", "graphs"])
def test_load_pair_warms_up_and_samples_on_cuda(tiny_pair_dirs, engine):
    """load_pair's warm-up runs sampled sessions; then sampled sessions of every loop kind run and emit tokens."""
    from gammatune_tui.engine.loading.models import load_pair

    pair = load_pair(**_pair_kwargs(tiny_pair_dirs, engine=engine))
    assert pair.device == torch.device("cuda", torch.cuda.current_device()) and pair.warmup_s > 0
    for method in ("specdecode", "gammatune+", "hf-heuristic"):
        dec = SpeculativeDecoder(pair, PolicySettings.build(method, 4),
                                 SamplingConfig(temperature=0.7, top_p=0.9, seed=3))
        evs = [e for e in dec.generate(PROMPT, max_new_tokens=32) if isinstance(e, StepEvent)]
        assert sum(len(e.emitted) for e in evs) >= 1
        assert dec._gen.device.type == "cuda" and dec._gen.device.index is not None


def test_warm_up_at_the_default_temperature_on_cuda(tiny_pair_dirs):
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.engine.loading.warmup import warm_up

    pair = load_pair(**_pair_kwargs(tiny_pair_dirs, warmup=False))
    assert warm_up(pair) > 0


def test_prompt_lookup_samples_on_cuda(tiny_pair_dirs):
    from gammatune_tui.engine.loading.models import load_pair

    t, _ = tiny_pair_dirs
    pair = load_pair(str(t), device="cuda:0", dtype="float32", drafter="prompt-lookup")
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig(temperature=0.7, seed=1))
    assert any(isinstance(e, StepEvent) for e in dec.generate("abcabcabcabc", max_new_tokens=16))


@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cli_run_and_compare_sample_on_cuda(tiny_pair_dirs, capsys, device):
    from gammatune_tui import cli

    def invoke(argv, capsys):
        with pytest.raises(SystemExit) as info:
            cli.main(list(argv))
        out, err = capsys.readouterr()
        return info.value.code, out, err

    t, d = tiny_pair_dirs
    args = ["--target", str(t), "--draft", str(d), "--device", device]
    code, out, err = invoke(["run", "def f(x):", *args, "-n", "16", "--raw", "-t", "0.7"], capsys)
    assert code == 0, err
    code, out, err = invoke(["compare", "--print", *args, "-n", "12", "-t", "0.7", "def f(x):"], capsys)
    assert code == 0, err


def test_chat_first_turns_sample_on_cuda(tiny_pair_dirs):
    from gammatune_tui.session.live import LiveSource

    src = LiveSource(PolicySettings.build("gammatune+", 4), SamplingConfig(temperature=0.7, top_p=0.9, seed=1),
                     load_kwargs=_pair_kwargs(tiny_pair_dirs), max_new_tokens=20, process=False)
    src.prepare(lambda stage, frac: None)
    for prompt in ("def ", "again"):
        items = list(src.events(prompt))
        assert any(isinstance(e, StepEvent) for e in items)
    assert len(src.messages) == 4


def test_staged_ids_arrive_intact_through_the_pinned_ring():
    from gammatune_tui.engine.common.staging import RING, to_device

    dev = torch.device("cuda", torch.cuda.current_device())
    outs = [(list(range(i, i + 1 + i % 70)), to_device(list(range(i, i + 1 + i % 70)), dev)) for i in range(3 * RING)]
    for want, got in outs:
        assert got.device == dev and got.shape == (1, len(want)) and got[0].tolist() == want


@pytest.mark.parametrize("engine", ["static", "graphs"])
def test_one_read_per_whole_window_step_and_event_timings_on_cuda(tiny_pair, monkeypatch, engine):
    """Issue 18 m2 on the device: the window comes back with the verdict (one read per step), and the
    step's draft/verify seconds are the device's own (CUDA events), within the host's time for the step."""
    from gammatune_tui.engine import drafting

    reads: list[int] = []
    real = drafting.host_read
    monkeypatch.setattr(drafting, "host_read", lambda t: reads.append(1) or real(t))
    pair = cuda_pair(tiny_pair, engine, torch.float32)
    for sampling in (SamplingConfig(), SamplingConfig(temperature=0.7, top_p=0.9, seed=1)):
        reads.clear()
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), sampling)
        steps = [e for e in dec.generate(PROMPT, max_new_tokens=32) if isinstance(e, StepEvent)]
        assert len(reads) == len(steps)
        assert all(e.draft_s > 0 and e.verify_s > 0 for e in steps if e.drafted)
        assert all(e.draft_s + e.verify_s <= e.step_s * 1.05 + 1e-4 for e in steps)
