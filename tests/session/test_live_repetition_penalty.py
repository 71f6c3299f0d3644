"""The chat's `--repetition-penalty` (issue 24 row 15): every turn is `generate` with the penalty, over the whole history."""

from __future__ import annotations

import torch

from gammatune_tui.engine.events import StepEvent
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.sampling import SamplingConfig
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
