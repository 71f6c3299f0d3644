"""The chat's `--repetition-penalty` (issue 24 row 15): every turn is `generate` with the penalty, over the whole history."""

from __future__ import annotations

import torch

from gammatune_tui.engine.events import StepEvent
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.session.live import LiveSource


def test_each_turn_is_generate_with_the_penalty(tiny_pair):
    src = LiveSource(PolicySettings.build("gammatune+", 3), SamplingConfig(repetition_penalty=1.5), pair=tiny_pair,
                     max_new_tokens=20)
    src.prepare(lambda stage, frac: None)
    for text in ("hello", "again"):
        events = list(src.events(text))
        header = events[0]
        got = [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]
        ids = torch.tensor([header.prompt_ids])
        want = tiny_pair.target.generate(ids, max_new_tokens=20, do_sample=False, repetition_penalty=1.5)
        assert got == want[0, ids.shape[1]:].tolist()
        assert header.sampling["repetition_penalty"] == 1.5


def test_a_recording_says_which_penalty_was_used():
    from gammatune_tui.session.replay import recorded_settings

    sampling = SamplingConfig(temperature=0.7, seed=3, repetition_penalty=1.3)
    _, back = recorded_settings("gammatune+", 4, {}, sampling.to_json())
    assert back == sampling
    _, plain = recorded_settings("gammatune+", 4, {}, SamplingConfig().to_json())
    assert plain.repetition_penalty == 1.0   # recordings without the key (every one made before it) read as off
