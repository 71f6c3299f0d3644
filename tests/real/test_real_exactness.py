"""On real weights every method stays lossless: greedy = `model.generate`, sampled = the target's own law.

Two draft sources: prompt lookup (which accepts most of a summary's tokens,
so the accept path runs on every step) and a draft cut from the target's
first 4 layers (which accepts almost nothing: the reject path). Prompts:
through the ChatML template and raw.
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.events import SessionSummary, StepEvent
from gammatune_tui.engine.policies import METHODS, PolicySettings
from gammatune_tui.engine.common.sampling import Served

from real_prompts import CAPITAL, RAW, SUMMARISE

N = 28


def _reference(pair, ids, n):
    """transformers' own greedy decoding, stopping at the same end-of-turn ids."""
    eos = sorted(pair.eos_ids)
    inp = torch.tensor([ids])
    with torch.no_grad():
        out = pair.target.generate(inp, attention_mask=torch.ones_like(inp), do_sample=False, max_new_tokens=n,
                                   eos_token_id=eos, pad_token_id=eos[0], temperature=None, top_p=None,
                                   top_k=None)
    return out[0, len(ids):].tolist()


def _session(pair, ids, method, n, sampling=None, gamma0=4):
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0), sampling or SamplingConfig(temperature=0.0))
    events = list(dec.generate(ids, max_new_tokens=n))
    out = [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]
    summary = events[-1]
    assert isinstance(summary, SessionSummary)
    return out, summary


@pytest.mark.parametrize("prompt, raw", [(SUMMARISE, False), (RAW, True)], ids=["chat-summarise", "raw-code"])
def test_prompt_lookup_is_exact_for_every_method(smollm2_pair, prompt, raw):
    ids = smollm2_pair.encode_prompt(prompt, raw=raw)
    n = N if not raw else 20
    want = _reference(smollm2_pair, ids, n)
    accepted = {}
    for method in METHODS:
        got, summary = _session(smollm2_pair, ids, method, n)
        assert got == want, f"{method} differs from model.generate"
        accepted[method] = summary.acceptance_rate
    if not raw:   # a summary copies its paragraph: prompt lookup's drafts are mostly kept
        assert max(accepted.values()) >= 0.5, accepted


def test_a_layer_cut_draft_is_exact_for_every_method(layer_cut_pair):
    ids = layer_cut_pair.encode_prompt(CAPITAL)
    want = _reference(layer_cut_pair, ids, 16)
    for method in METHODS:
        got, summary = _session(layer_cut_pair, ids, method, 16)
        assert got == want, f"{method} differs from model.generate"
        assert summary.draft_calls > 0


@pytest.mark.parametrize("source, prompt", [
    ("layer_cut_pair", "The capital of France is"),                                   # q: the cut's own rows
    ("smollm2_pair", "The capital of France is Paris. The capital of France is"),      # q: a point mass on " Paris"
], ids=["layer-cut", "prompt-lookup"])
def test_sampled_first_token_follows_the_targets_law(request, source, prompt):
    """Each session's first token, drafted and then accepted or resampled, against the target's served p.

    top-k 4 keeps the law to four outcomes; seeds 0..99 make the test repeatable. Chi-square with 3
    degrees of freedom, 0.1 % level (16.27).
    """
    pair = request.getfixturevalue(source)
    sampling = SamplingConfig(temperature=1.0, top_k=4)
    ids = pair.encode_prompt(prompt, raw=True)
    with torch.no_grad():
        logits = pair.target(torch.tensor([ids])).logits[0, -1].float()
    p = Served(sampling).probs(logits[None])[0]
    support = torch.nonzero(p > 0).flatten().tolist()
    assert len(support) == 4
    n = 100
    counts = {t: 0 for t in support}
    rejected = 0
    for seed in range(n):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 1),
                                 SamplingConfig(temperature=1.0, top_k=4, seed=seed))
        step = next(e for e in dec.generate(ids, max_new_tokens=2) if isinstance(e, StepEvent))
        assert len(step.drafted) == 1          # the first token went through the accept test (or the residual)
        first = step.emitted[0].id
        rejected += step.accepted == 0
        assert first in counts, f"token {first} is outside the target's top-4"
        counts[first] += 1
    chi2 = sum((counts[t] - n * float(p[t])) ** 2 / (n * float(p[t])) for t in support)
    assert chi2 < 16.27, (counts, [round(float(p[t]), 3) for t in support])
    assert rejected > 0                  # the residual distribution was drawn from
    if source == "smollm2_pair":
        assert rejected < n              # …and lookup's proposal was kept too (the 4-layer cut's almost never is)
