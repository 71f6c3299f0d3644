"""Sampled speculative decoding serves exactly the target's law (docs/spec.md §1.3).

On an 8-token vocabulary the joint law of the first two generated tokens can
be computed exactly from the target alone; the decoder's samples are checked
against it with a chi-square test, and — so the test demonstrably has power —
shown to be incompatible with the draft's own law.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import pytest
import torch
from transformers.generation.logits_process import (
    LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
)

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.sampling import Served, accepted_count, leading_run, residual, sample_without_sync

PROMPT_IDS = [0, 1, 2, 3]
N_SAMPLES = 600


def joint_law(model, served: Served, vocab: int, prompt: list[int] = PROMPT_IDS) -> torch.Tensor:
    with torch.no_grad():
        first = served.probs(model(torch.tensor([prompt])).logits[0, -1:].float())[0]
        seqs = torch.tensor([prompt + [x] for x in range(vocab)])
        second = served.probs(model(seqs).logits[:, -1].float())
    return first[:, None] * second  # (x1, x2)


def chi2_pvalue(stat: float, dof: int) -> float:
    """Upper tail of chi-square (Wilson–Hilferty; accurate to ~1e-3 for dof >= 3)."""
    z = ((stat / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


def chi2_test(counts: Counter, law: torch.Tensor, n: int) -> float:
    expected = (law.flatten() * n).tolist()
    observed = [counts.get(i, 0) for i in range(len(expected))]
    # cells too rare for the chi-square approximation are pooled into one
    big = [i for i, e in enumerate(expected) if e >= 5]
    small = [i for i, e in enumerate(expected) if e < 5]
    cells = [(observed[i], expected[i]) for i in big]
    if small:
        cells.append((sum(observed[i] for i in small), sum(expected[i] for i in small)))
    stat = sum((o - e) ** 2 / e for o, e in cells)
    return chi2_pvalue(stat, len(cells) - 1)


def sample_pairs(pair, settings: PolicySettings, cfg: SamplingConfig, n: int) -> tuple[Counter, int]:
    counts: Counter = Counter()
    vocab = pair.target.config.vocab_size
    bonus = 0
    for seed in range(n):
        dec = SpeculativeDecoder(pair, settings, SamplingConfig(cfg.temperature, cfg.top_k, cfg.top_p, seed=seed))
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                bonus += ev.target_token is not None and ev.target_token.kind == "bonus" and len(ev.drafted) > 0
        counts[out[0] * vocab + out[1]] += 1
    return counts, bonus


@pytest.mark.parametrize("engine", ["eager", "static", "graph-body"])
@pytest.mark.parametrize(
    "cfg", [SamplingConfig(temperature=1.0), SamplingConfig(temperature=0.7, top_k=4)], ids=["T1", "T0.7-k4"],
)
def test_sampled_output_follows_target_law(micro_pair, cfg, engine):
    vocab = micro_pair.target.config.vocab_size
    served = Served(cfg)
    p_law = joint_law(micro_pair.target, served, vocab)
    q_law = joint_law(micro_pair.draft, served, vocab)
    # the draft's law must really differ, or the test could not fail
    assert (p_law - q_law).abs().sum() > 0.3
    pair = dataclasses.replace(micro_pair, engine=engine)
    counts, bonus = sample_pairs(pair, PolicySettings.build("specdecode", 3), cfg, N_SAMPLES)
    assert sum(counts.values()) == N_SAMPLES
    assert bonus > 0  # fully accepted windows (bonus path) occurred
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3
    assert chi2_test(counts, q_law, N_SAMPLES) < 1e-6


def test_token_by_token_drafting_follows_target_law(micro_pair):
    """gammatune+ may stop a window early, so it drafts through the one-read-per-token loop."""
    cfg = SamplingConfig(temperature=1.0)
    vocab = micro_pair.target.config.vocab_size
    p_law = joint_law(micro_pair.target, Served(cfg), vocab)
    counts, _ = sample_pairs(micro_pair, PolicySettings.build("gammatune+", 3, tau=0.5), cfg, N_SAMPLES)
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3


@pytest.mark.parametrize("method,params", [("svip", {"svip_h": 0.3}), ("adaedl", {"edl_lambda": 0.6})])
def test_entropy_stops_follow_target_law(micro_pair, method, params):
    """The peers' entropy rules end windows on H(q) (issue 27); the output law is still the target's."""
    cfg = SamplingConfig(temperature=1.0)
    vocab = micro_pair.target.config.vocab_size
    p_law = joint_law(micro_pair.target, Served(cfg), vocab)
    counts, _ = sample_pairs(micro_pair, PolicySettings.build(method, 3, **params), cfg, N_SAMPLES)
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3


def test_sampler_without_sync_draws_the_law():
    """The exponential race CUDA uses instead of torch.multinomial; checked here on the CPU."""
    law = torch.tensor([[0.5, 0.25, 0.125, 0.0625, 0.0625, 0.0, 0.0, 0.0]])
    g = torch.Generator().manual_seed(1)
    n = 4000
    draws = torch.cat([sample_without_sync(law, g) for _ in range(n)]).tolist()
    counts = Counter(draws)
    assert set(counts) <= {0, 1, 2, 3, 4}  # a zero-probability token is never drawn
    assert chi2_test(counts, law[0, :5], n) > 1e-3
    skewed = torch.tensor([0.25, 0.25, 0.25, 0.125, 0.125])
    assert chi2_test(counts, skewed, n) < 1e-6  # the test can tell a wrong law


def test_served_matches_transformers_pipeline():
    torch.manual_seed(0)
    logits = torch.randn(3, 50) * 3
    cfg = SamplingConfig(temperature=0.6, top_k=10, top_p=0.8)
    procs = LogitsProcessorList([TemperatureLogitsWarper(0.6), TopKLogitsWarper(10), TopPLogitsWarper(0.8)])
    want = torch.softmax(procs(None, logits.clone()), -1)
    got = Served(cfg).probs(logits)
    torch.testing.assert_close(got, want)
    assert ((got > 0).sum(-1) <= 10).all()
    # greedy serves the raw softmax (what the policies read)
    torch.testing.assert_close(Served(SamplingConfig()).probs(logits), torch.softmax(logits, -1))


def test_residual_and_accept_rules():
    p = torch.tensor([0.5, 0.3, 0.2, 0.0])
    q = torch.tensor([0.25, 0.5, 0.25, 0.0])
    torch.testing.assert_close(residual(p, q), torch.tensor([1.0, 0.0, 0.0, 0.0]))
    torch.testing.assert_close(residual(p, p), p)  # degenerate: p == q falls back to p
    # greedy: the drafts equal to the target's argmax, up to the first that is not
    assert int(leading_run(torch.tensor([1, 2, 3]) == torch.tensor([1, 2, 4]))) == 2
    assert int(leading_run(torch.tensor([], dtype=torch.bool))) == 0
    g = torch.Generator().manual_seed(0)
    ones = torch.ones(5)
    assert int(accepted_count(ones, ones, g)) == 5  # p == q accepts surely
    assert int(accepted_count(torch.zeros(3), ones[:3], g)) == 0  # p == 0 rejects surely
    # acceptance frequency of a single token is min(1, p/q)
    hits = sum(int(accepted_count(torch.tensor([0.3]), torch.tensor([0.6]), g)) for _ in range(4000))
    assert abs(hits / 4000 - 0.5) < 0.04


def test_sampling_config_validation():
    for bad in (dict(temperature=-0.1), dict(top_k=-1), dict(top_p=0.0), dict(top_p=1.5), dict(temperature=float("nan"))):
        with pytest.raises(ValueError):
            SamplingConfig(**bad)


def _debug_pvalues(micro_pair):  # pragma: no cover - run by hand when tuning N_SAMPLES
    for cfg in (SamplingConfig(temperature=1.0), SamplingConfig(temperature=0.7, top_k=4)):
        vocab = micro_pair.target.config.vocab_size
        served = Served(cfg)
        p_law, q_law = joint_law(micro_pair.target, served, vocab), joint_law(micro_pair.draft, served, vocab)
        counts, _ = sample_pairs(micro_pair, PolicySettings.build("specdecode", 3), cfg, N_SAMPLES)
        print(cfg, (p_law - q_law).abs().sum().item(), chi2_test(counts, p_law, N_SAMPLES), chi2_test(counts, q_law, N_SAMPLES))


# -- a model-free source: q is a point mass ---------------------------------------------------------
LOOKUP_PROMPT = [5, 6, 2, 4, 6]  # prompt lookup copies "2 4 6" after the earlier "6"; p(2) ≈ 0.27 here


def test_prompt_lookup_sampling_follows_target_law(micro_pair):
    """q = δ_x: accept with p(x), correct from norm(max(0, p − δ_x)); the output law is still the target's."""
    cfg = SamplingConfig(temperature=1.0)
    vocab = micro_pair.target.config.vocab_size
    p_law = joint_law(micro_pair.target, Served(cfg), vocab, LOOKUP_PROMPT)
    counts: Counter = Counter()
    accepted = rejected = 0
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(micro_pair, PolicySettings.build("specdecode", 3), SamplingConfig(1.0, seed=seed),
                                 drafter="prompt-lookup")
        out: list[int] = []
        for ev in dec.generate(LOOKUP_PROMPT, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                if ev.drafted:
                    accepted += ev.accepted
                    rejected += ev.accepted < len(ev.drafted)
        counts[out[0] * vocab + out[1]] += 1
    assert accepted > 50 and rejected > 50  # both the accept and the residual paths ran often
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3
    # power: a decoder that drew the correction from p instead of the residual (the classic point-mass
    # mistake) would give the first token this law, which the samples must refute
    first = p_law.sum(1)
    x = 2
    wrong = (1 - first[x]) * first
    wrong[x] += first[x]
    firsts = Counter()
    for key, c in counts.items():
        firsts[key // vocab] += c
    assert chi2_test(firsts, first, N_SAMPLES) > 1e-3
    assert chi2_test(firsts, wrong, N_SAMPLES) < 1e-6
