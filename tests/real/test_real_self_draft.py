"""SmolLM2-135M with its own weights at 4 and 8 bits as the draft: exact, and it agrees with the target.

The one real model gammatune runs offline has no draft model; a quantized copy
of itself is the draft any model has (issue 26). Greedy output must be
`model.generate`'s, and the copy must agree with the target often enough to
pay (greedy agreement ≥ 0.85 over a chat answer, teacher-forced).
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.common.model_weights import weight_bytes
from gammatune_tui.engine.common.packed_linear import packed
from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.engine.policies import PolicySettings

from real_prompts import SUMMARISE
from test_real_exactness import _reference   # transformers' own greedy decoding, the one reference

N = 40


@pytest.mark.parametrize("kind, precision", [("self:int4", "int4 g32"), ("self:int8", "int8")])
def test_a_self_draft_of_smollm2_is_exact_and_agrees(smollm2_pair, kind, precision):
    ids = smollm2_pair.encode_prompt(SUMMARISE)
    want = _reference(smollm2_pair, ids, N)
    dec = SpeculativeDecoder(smollm2_pair, PolicySettings.build("specdecode", 4), SamplingConfig(temperature=0.0),
                             drafter=kind)
    events = list(dec.generate(ids, max_new_tokens=N))
    got = [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]
    assert got == want
    head, summary = events[0], events[-1]
    assert isinstance(head, SessionHeader) and isinstance(summary, SessionSummary)
    target = "float32, verify packed" if packed(smollm2_pair.target) else "float32"   # the header names the copy
    assert head.draft == kind and head.draft_precision == precision and head.target_precision == target
    weights = weight_bytes(smollm2_pair.target)
    assert 0 < head.draft_bytes <= 0.35 * weights   # the copy adds at most 0.35× the target's weight bytes
    assert summary.accepted > 0
    # agreement: the copy's argmax is the target's, teacher-forced over the target's own answer
    full = torch.tensor([ids + want])
    with torch.no_grad():
        t = smollm2_pair.target(full).logits[0, len(ids) - 1:-1].argmax(-1)
        d = dec.pair.draft(full).logits[0, len(ids) - 1:-1].argmax(-1)
    agreement = float((t == d).float().mean())
    assert agreement >= 0.85, agreement
