"""`bench --simulate` records traces of hybrid models (recurrent state) exactly.

After the draft's off-path continuation the recorder takes the draft back to the
target's path; a hybrid draft's state cannot be cropped, so it is rewound by the
hybrid runner. What a user would notice if it were not: the simulated windows
after a miss would come from a draft that still remembers its rejected tokens.
Checked here against the draft run without any cache.
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.bench.sim.trace_record import record_trace
from gammatune_tui.bench.sim.trace_sampled import record_sampled_trace
from gammatune_tui.engine.common.sampling import SamplingConfig, Served
from gammatune_tui.engine.loading.models import ModelPair
from tiny_models import make_byte_tokenizer, make_family, noisy_copy

PROMPT = [5, 6, 7, 8, 9, 5, 6, 7]


def _pair(family):
    target = make_family(family, 0)
    return ModelPair(target=target, draft=noisy_copy(target, seed=3, scale=0.6), tokenizer=make_byte_tokenizer(),
                     device=torch.device("cpu"), dtype=torch.float32, eos_ids=frozenset({1}))


def _draft_logits(pair, ids):
    with torch.no_grad():
        return pair.draft(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].float()


@pytest.mark.parametrize("family", ["qwen3_5_text", "recurrent_gemma"])
def test_greedy_traces_follow_the_draft_after_its_misses(family):
    pair = _pair(family)
    tr = record_trace(pair, "p", PROMPT, 12, 3, pair.eos_ids)
    assert tr.off_ids, "no miss: the test would not exercise a rollback"
    for j, off in tr.off_ids.items():
        if off:
            want = int(_draft_logits(pair, PROMPT + tr.tokens[:j] + [tr.draft_ids[j]]).argmax())
            assert off[0] == want
    for i in range(len(tr.tokens)):
        assert tr.draft_ids[i] == int(_draft_logits(pair, PROMPT + tr.tokens[:i]).argmax())


def test_sampled_traces_follow_the_draft_after_its_misses():
    pair = _pair("qwen3_5_text")
    cfg = SamplingConfig(temperature=0.8, seed=1)
    tr = record_sampled_trace(pair, "p", PROMPT, 12, 3, pair.eos_ids, cfg)
    misses = sorted(j for j, off in tr.off_ids.items() if off)
    assert misses and misses[0] < len(tr.tokens) - 1, "no miss before the end: nothing to roll back"
    served = Served(cfg)
    for i in range(len(tr.tokens)):
        q = served.probs(_draft_logits(pair, PROMPT + tr.tokens[:i]).unsqueeze(0))[0]
        assert tr.draft_prob[i] == pytest.approx(float(q[tr.draft_ids[i]]), rel=1e-4, abs=1e-6)
