"""The n-gram pool: greedy output is the target's own, and a later turn drafts from an earlier turn's answer.

Its proposals are prompt lookup's in a first session; from the second
session on the same decoder the pool also holds the earlier prompts and
answers, which a fresh prompt-lookup session does not see.
"""

from __future__ import annotations

import pytest

from tiny_models import emitted, greedy_ref, target_only_pair
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.loading.models import load_pair

N = 48


@pytest.fixture(scope="module")
def tiny():
    return target_only_pair("ngram-pool", seed=3, init=0.3, name="tiny-target")


@pytest.fixture(scope="module")
def demo():
    return load_pair(demo=True, device="cpu", dtype="float32", threads=1, drafter="ngram-pool")


def _turns(pair, drafter, prompts, method="specdecode", gamma0=4):
    """Each prompt's events, one decoder for all of them (a conversation's turns)."""
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0), SamplingConfig(), drafter=drafter)
    return [list(dec.generate(list(p), max_new_tokens=N, turn=i)) for i, p in enumerate(prompts)]


def _accepted(evs) -> int:
    return sum(e.accepted for e in evs if isinstance(e, StepEvent))


@pytest.mark.parametrize("which", ["tiny", "demo"])
@pytest.mark.parametrize("method", ["specdecode", "gammatune+", "hf-heuristic"])
def test_greedy_over_two_turns_is_the_targets_and_turn_two_drafts_from_turn_one(which, method, request):
    pair = request.getfixturevalue(which)
    first = pair.encode_prompt("def fib(n):\n    return", raw=True)
    second = pair.encode_prompt("print(fib(", raw=True)
    # a repeated question: its answer is in the pool after turn 1, in no prompt
    prompts = [first, second, first]
    pool = _turns(pair, "ngram-pool", prompts, method)
    for p, evs in zip(prompts, pool):
        assert emitted(evs) == greedy_ref(pair, list(p), N)
        assert evs[0].drafter == "ngram-pool" and evs[0].drafter_params == {"ngram_min": 1, "ngram_max": 3}
    lookup = _turns(pair, "prompt-lookup", prompts, method)
    # turn 1: nothing earlier in the pool, so the same proposals as prompt lookup, step for step
    assert [e.drafted for e in pool[0] if isinstance(e, StepEvent)] == \
        [e.drafted for e in lookup[0] if isinstance(e, StepEvent)]
    # turn 3 asks turn 1's question again: the pool drafts turn 1's answer, prompt lookup only the prompt's text
    assert _accepted(pool[2]) > _accepted(lookup[2])
    assert len([e for e in pool[2] if isinstance(e, StepEvent)]) < len([e for e in lookup[2] if isinstance(e, StepEvent)])
