"""What the decoder and the runners expose (issue 44): no test hooks in the step loop, and γ max reaches a runner
as an argument of its session's start, from the policy the decoder drives (a runner imports no policy)."""

from __future__ import annotations

import torch

from gammatune_tui.engine import PolicySettings, SpeculativeDecoder
from gammatune_tui.engine.runners import static
from tiny_models import target_only_pair


def test_the_decoder_has_no_test_hooks():
    dec = SpeculativeDecoder(target_only_pair("prompt-lookup"), drafter="prompt-lookup")
    assert not hasattr(dec, "on_step") and not hasattr(dec, "cache_lengths")


def test_a_sessions_gamma_max_is_the_policys_and_reaches_the_runners_start(monkeypatch):
    seen = []
    real = static.StaticRunner.start
    monkeypatch.setattr(static.StaticRunner, "start",
                        lambda self, capacity, gamma_max=None: seen.append(gamma_max) or real(self, capacity, gamma_max))
    import dataclasses

    pair = dataclasses.replace(target_only_pair("prompt-lookup"), engine="static")
    dec = SpeculativeDecoder(pair, PolicySettings.build("gammatune", 3, gamma_max=7), drafter="prompt-lookup")
    list(dec.generate(torch.tensor([5, 6, 7, 8]).tolist(), max_new_tokens=4))
    assert seen and seen[-1] == 7


def test_the_runner_and_drafting_modules_stay_under_400_lines():
    from pathlib import Path

    engine = Path(__file__).resolve().parents[2] / "gammatune_tui" / "engine"
    files = [*engine.glob("runners/*.py"), *engine.glob("drafting/*.py"), engine / "decoder.py"]
    over = {f.name: n for f in files if (n := len(f.read_text(encoding="utf-8").splitlines())) > 400}
    assert over == {}
