"""Each drafted token carries H(q) in nats of the law it was drawn from (docs/spec.md §2.1), and old files still read."""

from __future__ import annotations

import json
import math

import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.events import event_from_json
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.session.recording import read_recording, shipped_recordings
from test_sampling import PROMPT_IDS


def _first_step(pair, sampling, method="specdecode", drafter=None):
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, 3), sampling, drafter=drafter)
    return next(e for e in dec.generate(PROMPT_IDS, max_new_tokens=8) if isinstance(e, StepEvent))


def _law(pair, served=None):
    with torch.no_grad():
        logits = pair.draft(torch.tensor([PROMPT_IDS])).logits[0, -1:].float()
    return torch.softmax(logits, -1)[0] if served is None else served.probs(logits)[0]


def _h(q):
    return float(torch.special.entr(q.double()).sum())


def test_greedy_entropy_is_the_raw_softmaxs_and_sampled_the_served_laws(micro_pair):
    for method in ("specdecode", "gammatune+"):   # the whole window read with the verdict, and token by token
        step = _first_step(micro_pair, SamplingConfig(), method)
        assert math.isclose(step.drafted[0].entropy, _h(_law(micro_pair)), rel_tol=1e-4)
        cfg = SamplingConfig(temperature=0.7, top_k=5, seed=3)
        step = _first_step(micro_pair, cfg, method)
        served = _h(_law(micro_pair, Served(cfg)))
        assert math.isclose(step.drafted[0].entropy, served, rel_tol=1e-4)
        assert served < _h(_law(micro_pair))   # top-k and T < 1 narrow the law: not the raw softmax's
        assert "entropy" in json.dumps(step.to_json())


def test_prompt_lookup_is_a_point_mass_of_entropy_zero(micro_pair):
    dec = SpeculativeDecoder(micro_pair, PolicySettings.build("specdecode", 3), SamplingConfig(),
                             drafter="prompt-lookup")
    steps = [e for e in dec.generate(PROMPT_IDS * 3, max_new_tokens=12) if isinstance(e, StepEvent)]
    drafted = [t for e in steps for t in e.drafted]
    assert drafted and all(t.entropy == 0.0 for t in drafted)


def test_a_recording_made_before_entropy_replays_as_it_was_written(tmp_path):
    """Every shipped recording, as a version before entropy wrote it (no "entropy" key): read, and written back exactly."""
    for path in shipped_recordings():
        lines = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        steps = [d for d in lines if d["type"] == "step"]
        for d in steps:
            for t in d["drafted"]:
                t.pop("entropy", None)
        old = tmp_path / path.name
        old.write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
        read = [e for e in read_recording(old).events if isinstance(e, StepEvent)]
        assert steps and len(read) == len(steps)
        for d, ev in zip(steps, read):
            assert all(t.entropy is None for t in ev.drafted)
            assert ev.to_json() == d == event_from_json(d).to_json()   # written back exactly as it was
