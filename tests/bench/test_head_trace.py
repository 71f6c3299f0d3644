"""A head's traces (bench/sim/head_trace.py): `bench --simulate` and the oracle replay an MTP or EAGLE-3 head
step for step as the live decoder runs it.

What a user would notice: a head's simulated sessions are its live sessions (every method, γ0 1 and 4, on a
trained head whose acceptance is high, so the replay has windows to get right), the oracle bounds every policy,
and a trace survives its file. A head's second token reads its own output, not the target's next row, so a
draft model's teacher-forced trace would get it wrong: the last test shows the difference on the same head.
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.head_trace import HeadTrace
from gammatune_tui.bench.sim.oracle import oracle_run
from gammatune_tui.bench.sim.simulate import TraceTooShallow, check_against_live, play_trace
from gammatune_tui.bench.sim.trace_kinds import trace_from_json, trace_kind
from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.common.pair import ModelPair
from tiny_models import make_word_tokenizer
from tiny_mtp import runs_heads, train_head, write_mtp_checkpoint

COST = CostModel(draft_token_s=2e-4, verify_s={1: 1e-3, 2: 1.1e-3, 5: 1.4e-3, 9: 2e-3, 17: 3.5e-3}, step_s=2e-4,
                 emit_token_s=1e-5)
PROMPTS = [[0, 5 + i, 9 + 2 * i, 7 + i] for i in range(6)]
N = 32


pytestmark = pytest.mark.skipif(not runs_heads(), reason="this transformers' MtpModel runs no head layer alone")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A hybrid Qwen3.5-text target whose MTP head was fitted for seconds on its own text (acceptance ~0.95)."""
    from gammatune_tui.engine.drafting import mtp as mtp_module

    target = write_mtp_checkpoint("qwen3_5_text", tmp_path_factory.mktemp("q35"), seed=5, vocab=64, init=0.3)
    for p in target.parameters():
        p.requires_grad_(False)
    head = mtp_module.load_head(target)
    assert train_head(target, head, PROMPTS, steps=40) > 0.9
    mtp_module._HEADS[target] = head   # what `--draft mtp` reads for this target: the trained head
    return ModelPair(target=target, draft=None, tokenizer=make_word_tokenizer([str(i) for i in range(64)]),
                     device=torch.device("cpu"), dtype=torch.float32, eos_ids=frozenset({-1}), name_target="t",
                     name_draft="mtp")


@pytest.fixture(scope="module")
def trace(pair) -> HeadTrace:
    return trace_kind("mtp").record(pair, "p", PROMPTS[1], N, 8, pair.eos_ids, {"mtp_pre_norm": False}, 0.0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("gamma0", [1, 4])
def test_a_replay_is_the_live_run_step_for_step(pair, trace, method, gamma0):
    settings = PolicySettings.build(method, gamma0, gamma_max=8)
    dec = SpeculativeDecoder(pair, settings, SamplingConfig(), drafter="mtp")
    events = list(dec.generate(list(trace.prompt_ids), max_new_tokens=N))
    check = check_against_live(trace, settings, events, COST, N)
    assert check.steps_equal and check.output_equal, check


def test_the_head_is_accepted_its_calls_counted_and_the_oracle_bounds_every_policy(trace):
    one = play_trace(trace, PolicySettings.build("specdecode", 1).make(), None, COST)
    assert one.tokens == N and one.accepted > 0.8 * one.drafted > 0   # the trained head's next token
    rec = play_trace(trace, PolicySettings.build("specdecode", 4).make(), None, COST)
    assert rec.accepted > one.accepted and rec.draft_calls == rec.drafted   # one call per chained token
    best = oracle_run(trace, COST)
    for method in METHODS:
        r = play_trace(trace, PolicySettings.build(method, 4, gamma_max=8).make(), None, COST)
        assert best.record.wall_s <= r.wall_s + 1e-12, method
    with pytest.raises(TraceTooShallow):
        play_trace(trace, PolicySettings.build("specdecode", 12, gamma_max=12).make())


def test_a_trace_round_trips_and_a_session_gives_the_same_chains(pair, trace):
    back = trace_from_json(trace.to_json())
    assert isinstance(back, HeadTrace) and back == trace
    settings = PolicySettings.build("specdecode", 8, gamma_max=8)
    events = list(SpeculativeDecoder(pair, settings, SamplingConfig(), drafter="mtp").generate(PROMPTS[1],
                                                                                               max_new_tokens=N))
    header, steps = events[0], [e for e in events if getattr(e, "type", "") == "step"]
    again = trace_kind("mtp").from_session(pair, header, steps)   # the chat's hindsight
    assert again is not None and again.tokens == trace.tokens and again.proposals == trace.proposals


def test_a_chain_is_not_the_teacher_forced_argmax(trace):
    """Where the head's first token was right, its second token (from its own output) differs somewhere from
    the first token it drafts one position on (from the target's row): a model trace would replay it wrong."""
    toks, props = trace.tokens, trace.proposals
    pairs = [(props[n][1], props[n + 1][0]) for n in range(len(toks) - 1) if props[n] and props[n][0] == toks[n]]
    assert pairs and any(a != b for a, b in pairs)
