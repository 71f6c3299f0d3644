"""Logits processors on both models (engine/logits_processing.py): lossless against `generate` with the same ones.

A repetition penalty (SamplingConfig, `--repetition-penalty`) and any
transformers processor given to the decoder change the target's law; the
output must be `generate`'s with the same processors, token for token under
greedy decoding and in law (chi-square) when sampled, on every runner.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
import torch
from transformers.generation.logits_process import (
    LogitsProcessorList, NoRepeatNGramLogitsProcessor, RepetitionPenaltyLogitsProcessor,
    UnbatchedClassifierFreeGuidanceLogitsProcessor,
)

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.plain import plain_decode
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.errors import InvalidParameter

from test_sampling import chi2_test

PROMPT = "def add(a, b):\n    return a + b\n\ndef"


def decoded(pair, settings, sampling, prompt_ids, n, **kw) -> list[int]:
    out: list[int] = []
    for ev in SpeculativeDecoder(pair, settings, sampling, **kw).generate(prompt_ids, n):
        if isinstance(ev, StepEvent):
            out += [t.id for t in ev.emitted]
    return out


def reference(pair, prompt_ids, n, **gen_kw) -> list[int]:
    ids = torch.tensor([prompt_ids])
    out = pair.target.generate(ids, max_new_tokens=n, do_sample=False, **gen_kw)
    return out[0, len(prompt_ids):].tolist()


@pytest.mark.parametrize("engine", ["eager", "static"])
@pytest.mark.parametrize("method", ["specdecode", "gammatune+"])
def test_greedy_with_a_repetition_penalty_is_generates_with_it(tiny_pair, engine, method):
    pair = dataclasses.replace(tiny_pair, engine=engine)
    ids = pair.encode_prompt(PROMPT, raw=True)
    want = reference(pair, ids, 40, repetition_penalty=1.5)
    got = decoded(pair, PolicySettings.build(method, 4), SamplingConfig(repetition_penalty=1.5), ids, 40)
    assert got == want
    # the penalty changed the text (else the test could not tell it was applied)
    assert got != reference(pair, ids, 40)[:len(got)]


def test_processors_given_to_the_decoder_reach_both_models(tiny_pair):
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    procs = [NoRepeatNGramLogitsProcessor(2), RepetitionPenaltyLogitsProcessor(1.2)]
    want = reference(tiny_pair, ids, 40, logits_processor=LogitsProcessorList(procs))
    got = decoded(tiny_pair, PolicySettings.build("gammatune", 3), SamplingConfig(), ids, 40, logits_processor=procs)
    assert got == want


def test_plain_decoding_applies_the_penalty_too(tiny_pair):
    """compare's reference row: the lossless check compares the speculative rows with it."""
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    run = plain_decode(tiny_pair, ids, 30, SamplingConfig(repetition_penalty=1.5))
    assert run.token_ids == reference(tiny_pair, ids, 30, repetition_penalty=1.5)[:len(run.token_ids)]


def test_a_stateful_processor_is_refused_by_name(tiny_pair):
    cfg = UnbatchedClassifierFreeGuidanceLogitsProcessor(1.5, tiny_pair.target)
    with pytest.raises(InvalidParameter, match="UnbatchedClassifierFreeGuidanceLogitsProcessor"):
        SpeculativeDecoder(tiny_pair, logits_processor=[cfg])


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "2", True])
def test_a_bad_penalty_is_refused(bad):
    with pytest.raises(InvalidParameter, match="repetition_penalty"):
        SamplingConfig(repetition_penalty=bad)


def test_the_penalty_is_recorded_only_when_on():
    assert "repetition_penalty" not in SamplingConfig().to_json()
    assert SamplingConfig(repetition_penalty=1.3).to_json()["repetition_penalty"] == 1.3


# -- sampled: the law of the first two tokens, with the penalty, on the 8-token micro pair ----------

PROMPT_IDS = [0, 1, 2, 3]
N = 500


def joint_law(model, served: Served, penalty: float, vocab: int) -> torch.Tensor:
    proc = RepetitionPenaltyLogitsProcessor(penalty)
    with torch.no_grad():
        first_logits = model(torch.tensor([PROMPT_IDS])).logits[0, -1:].float()
        first = served.probs(proc(torch.tensor([PROMPT_IDS]), first_logits))[0]
        rows = []
        for x in range(vocab):
            seq = torch.tensor([PROMPT_IDS + [x]])
            rows.append(served.probs(proc(seq, model(seq).logits[0, -1:].float()))[0])
    return first[:, None] * torch.stack(rows)


@pytest.mark.parametrize("engine", ["eager", "static"])
def test_sampled_with_a_penalty_follows_the_targets_penalised_law(micro_pair, engine):
    pair = dataclasses.replace(micro_pair, engine=engine)
    vocab = pair.target.config.vocab_size
    served = Served(SamplingConfig(temperature=1.0))
    p_law = joint_law(pair.target, served, 4.0, vocab)
    plain_law = joint_law(pair.target, served, 1.0, vocab)
    counts: Counter = Counter()
    for seed in range(N):
        out = decoded(pair, PolicySettings.build("specdecode", 3),
                      SamplingConfig(temperature=1.0, seed=seed, repetition_penalty=4.0), PROMPT_IDS, 2)
        counts[out[0] * vocab + out[1]] += 1
    assert chi2_test(counts, p_law, N) > 1e-3
    assert chi2_test(counts, plain_law, N) < 1e-6   # the penalty was applied: the unpenalised law is refused
