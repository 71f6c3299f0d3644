"""A window of 0 (costaware's "do not draft") is a plain target step, and output stays exact around it.

The decoder already took windows of 0 at the end of the budget; costaware
plans them anywhere, so the draft's cache must catch up over the tokens it
skipped. Checked greedy (identical to target.generate under every CPU runner)
and sampled (the target's law, chi-square), with scripted windows and with
costaware itself.
"""

from __future__ import annotations

import dataclasses

import pytest

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.events import event_from_json
from gammatune_tui.engine.policies import Policy, PolicyParams
from gammatune_tui.engine.common.sampling import Served
from test_decoder import ENGINES, PROMPT, emitted_ids, target_greedy
from test_sampling import N_SAMPLES, PROMPT_IDS, chi2_test, joint_law


class Script(Policy):
    """Plans the given windows in turn, 0s included (a test double, not a method)."""

    name = "script"

    def __init__(self, windows):
        super().__init__(1, PolicyParams.build(gamma_min=1, gamma_max=8))
        self.windows, self.i = list(windows), 0
        self.gamma = self.windows[0]

    def update(self, accepted, drafted, window=()):
        super().update(accepted, drafted)
        self.i += 1
        self.gamma = self.windows[self.i % len(self.windows)]


@pytest.mark.parametrize("engine", ENGINES)
def test_greedy_with_plain_steps_equals_target_generate(tiny_pair, engine):
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    ref = target_greedy(tiny_pair, ids, 40, eos=list(tiny_pair.eos_ids))
    pair = dataclasses.replace(tiny_pair, engine=engine)
    evs = list(SpeculativeDecoder(pair, Script([0, 3, 0, 0, 2, 5, 0, 1]), SamplingConfig()).generate(
        PROMPT, max_new_tokens=40))
    assert emitted_ids(evs) == ref
    plain = [e for e in evs if isinstance(e, StepEvent) and e.gamma == 0]
    assert plain and all(not e.drafted and len(e.emitted) == 1 for e in plain)
    assert all(event_from_json(e.to_json()) == e for e in plain)  # a recording of it reads back
    drafted = [e for e in evs if isinstance(e, StepEvent) and e.gamma > 0]
    assert sum(e.accepted for e in drafted) > 0  # the draft, after catching up, still agrees


def _law_samples(pair, make, cfg):
    counts, vocab = {}, pair.target.config.vocab_size
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, make(), SamplingConfig(cfg.temperature, cfg.top_k, cfg.top_p, seed=seed))
        out = [t.id for ev in dec.generate(PROMPT_IDS, max_new_tokens=3) if isinstance(ev, StepEvent)
               for t in ev.emitted]
        key = out[0] * vocab + out[1]
        counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.mark.parametrize("make", [lambda: Script([0, 2]), lambda: PolicySettings.build("costaware", 2).make()],
                         ids=["plain-then-draft", "costaware"])
def test_sampled_with_plain_steps_follows_target_law(micro_pair, make):
    cfg = SamplingConfig(temperature=1.0)
    vocab = micro_pair.target.config.vocab_size
    counts = _law_samples(micro_pair, make, cfg)
    assert chi2_test(counts, joint_law(micro_pair.target, Served(cfg), vocab), N_SAMPLES) > 1e-3
    assert chi2_test(counts, joint_law(micro_pair.draft, Served(cfg), vocab), N_SAMPLES) < 1e-6
