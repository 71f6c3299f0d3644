"""The decoder with prompt lookup as its draft source: lossless for every policy and runner, no draft cache.

A random tiny Llama with small weights decodes greedily into repeating
patterns, so prompt lookup proposes often, is accepted often and rejected
often, and finds nothing to propose on some steps: every path of the loop runs.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tiny_models import cache_lengths, emitted, noisy_copy, target_only_pair
from gammatune_tui.engine import METHODS, PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.events import event_from_json
from gammatune_tui.engine.loading.models import ModelPair, load_pair
from gammatune_tui.errors import InvalidParameter

ENGINES = ["eager", "static", "graph-body"]
PROMPT = "def fib(n):\n    return"
N = 64


@pytest.fixture(scope="module")
def lookup_pair():
    """A target alone (no draft model), as load_pair(drafter="prompt-lookup") gives."""
    return target_only_pair("prompt-lookup", name="tiny-target")


@pytest.fixture(scope="module")
def reference(lookup_pair):
    ids = lookup_pair.encode_prompt(PROMPT, raw=True)
    x = torch.tensor([ids])
    out = lookup_pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=N,
                                      eos_token_id=list(lookup_pair.eos_ids))
    return ids, out[0, len(ids):].tolist()


def session(pair, method="specdecode", gamma0=4, sampling=None, n=N, prompt=PROMPT, drafter=None, **kw):
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0, **kw), sampling or SamplingConfig(),
                             drafter=drafter)
    return dec, list(dec.generate(prompt, max_new_tokens=n))


def steps_of(evs):
    return [e for e in evs if isinstance(e, StepEvent)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("gamma0", [1, 4, 8])
@pytest.mark.parametrize("method", METHODS)
def test_greedy_with_prompt_lookup_equals_target_generate(lookup_pair, reference, method, gamma0, engine):
    ids, ref = reference
    pair = dataclasses.replace(lookup_pair, engine=engine)
    dec, evs = session(pair, method, gamma0)
    header, summary, steps = evs[0], evs[-1], steps_of(evs)
    assert emitted(evs) == ref
    assert header.drafter == "prompt-lookup" and header.draft == "prompt-lookup" and header.runner == engine
    assert header.drafter_params == {"ngram_min": 1, "ngram_max": 3}
    assert summary.drafter == "prompt-lookup" and summary.draft_calls == 0
    # the proposals were accepted sometimes and rejected sometimes, and some steps found nothing to copy
    assert 0.0 < summary.acceptance_rate < 1.0
    assert any(not e.drafted for e in steps) and any(e.accepted for e in steps)
    assert dec.source.runner is None and dec.runners.draft is None and cache_lengths(dec)[1] == 0


def test_early_stops_on_the_stand_in_confidence_stay_exact(lookup_pair, reference):
    ids, ref = reference
    for method in ("gammatune+", "assistant-threshold"):
        _, evs = session(lookup_pair, method, 6, tau=0.6)
        assert emitted(evs) == ref
        steps = steps_of(evs)
        assert any(e.early_stop for e in steps)
        for e in steps:
            if e.early_stop:  # the token that ended the window stays and read below τ
                last = e.drafted[-1]
                assert (last.top_prob if method == "gammatune+" else last.chosen_prob) < 0.6


def test_the_target_cache_holds_the_accepted_prefix_and_no_draft_cache_exists(lookup_pair):
    lengths = []
    for sampling in (SamplingConfig(), SamplingConfig(temperature=1.0, seed=4)):
        dec = SpeculativeDecoder(lookup_pair, PolicySettings.build("gammatune", 4), sampling)
        for ev in dec.generate(PROMPT, max_new_tokens=40):
            if isinstance(ev, StepEvent):   # yielded after the step's rewind
                lengths.append((len(dec.ids), *cache_lengths(dec)))
    assert lengths and all(t == n - 1 and d == 0 for n, t, d in lengths)


def test_steps_that_propose_nothing_leave_the_policy_alone(lookup_pair):
    _, evs = session(lookup_pair, "gammatune", 8)
    steps = steps_of(evs)
    empty = [e for e in steps[:-1] if not e.drafted]
    assert empty and all(e.gamma_next == e.gamma for e in empty)
    assert all(e.target_token.kind == "bonus" and len(e.emitted) == 1 for e in empty)
    # a step that drafted and missed does move γ̄ (η = 0.5 from 8 towards the accepted count)
    assert any(e.gamma_next < e.gamma for e in steps if e.drafted and e.accepted < len(e.drafted))


def test_a_pair_with_a_draft_model_can_draft_by_lookup_too(lookup_pair, reference):
    ids, ref = reference
    draft = noisy_copy(lookup_pair.target, seed=2, scale=0.15)
    full = ModelPair(target=lookup_pair.target, draft=draft, tokenizer=lookup_pair.tokenizer,
                     device=torch.device("cpu"), dtype=torch.float32, name_target="t", name_draft="d")
    _, by_model = session(full, "hf-heuristic", 4)
    dec, by_lookup = session(full, "hf-heuristic", 4, drafter="prompt-lookup")
    _, alone = session(lookup_pair, "hf-heuristic", 4)
    assert by_model[0].drafter == "model" and by_model[0].draft == "d" and by_model[-1].draft_calls > 0
    assert emitted(by_model) == emitted(by_lookup) == ref
    assert dec.source.runner is None and by_lookup[-1].draft_calls == 0
    assert [[t.id for t in e.drafted] for e in steps_of(by_lookup)] == \
        [[t.id for t in e.drafted] for e in steps_of(alone)]
    with pytest.raises(InvalidParameter, match="no draft model"):
        SpeculativeDecoder(lookup_pair, drafter="model")


def test_a_second_chat_turn_indexes_the_whole_conversation(lookup_pair):
    dec = SpeculativeDecoder(lookup_pair, PolicySettings.build("gammatune+", 4), SamplingConfig())
    first = list(dec.generate(PROMPT, max_new_tokens=24))
    convo = lookup_pair.encode_prompt(PROMPT + first[-1].text + "\nprint(fib(3))", raw=True)
    second = list(dec.generate(convo, max_new_tokens=24))
    x = torch.tensor([convo])
    ref = lookup_pair.target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=24,
                                      eos_token_id=list(lookup_pair.eos_ids))[0, len(convo):].tolist()
    assert emitted(second) == ref
    assert dec.source.index.size >= len(convo)


def test_lookup_events_say_q_is_a_point_mass_and_round_trip(lookup_pair):
    _, evs = session(lookup_pair, "specdecode", 4, sampling=SamplingConfig(temperature=0.8, seed=1), n=40)
    drafted = [t for e in steps_of(evs) for t in e.drafted]
    assert drafted
    for t in drafted:
        assert t.q_prob == 1.0 and t.proposal_prob == 1.0
        assert t.accept_prob == pytest.approx(t.target_prob)  # min(1, p(x)/1)
        assert 0.0 <= t.chosen_prob <= t.top_prob <= 1.0
    for ev in evs:
        assert event_from_json(ev.to_json()) == ev
    step = next(e for e in steps_of(evs) if e.drafted)
    assert step.to_json()["drafted"][0]["q_prob"] == 1.0
    # a model-drafted step keeps its old JSON form: no q_prob key, q(x) = chosen_prob
    t = dataclasses.replace(drafted[0], q_prob=None)
    assert t.proposal_prob == t.chosen_prob


def test_recordings_from_before_draft_sources_still_load(lookup_pair):
    _, evs = session(lookup_pair, n=8)
    header = evs[0].to_json()
    for key in ("drafter", "drafter_params"):
        del header[key]
    header["schema"] = 1   # files from then are schema 1: the reader upgrades them
    summary = evs[-1].to_json()
    del summary["drafter"]
    assert event_from_json(header).drafter == "" and event_from_json(summary, schema=1).drafter == ""


def test_load_pair_for_prompt_lookup_loads_the_target_alone(tiny_pair_dirs):
    t, d = map(str, tiny_pair_dirs)
    pair = load_pair(t, device="cpu", dtype="float32", threads=1, drafter="prompt-lookup", warmup=False)
    assert pair.draft is None and pair.name_draft == "prompt-lookup" and pair.drafter.name == "prompt-lookup"
    _, evs = session(pair, n=12)
    assert evs[0].drafter == "prompt-lookup" and len(emitted(evs)) == 12
    with pytest.raises(InvalidParameter, match="leave --draft out"):
        load_pair(t, d, device="cpu", drafter="prompt-lookup")
    with pytest.raises(InvalidParameter, match="give both"):
        load_pair(t, device="cpu")
    with pytest.raises(InvalidParameter, match="unknown drafter"):
        load_pair(t, device="cpu", drafter="nonsense")
