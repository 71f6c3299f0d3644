"""A load says where its time went, stage by stage, and the session header carries it (run's header, the subtitle)."""

from __future__ import annotations

import json

from gammatune_tui.engine import SpeculativeDecoder
from gammatune_tui.engine.events import event_from_json
from gammatune_tui.engine.loading.load_stages import LOAD_STAGES, load_stages_text
from gammatune_tui.engine.loading.models import load_pair


def test_load_pair_times_its_stages_and_the_header_keeps_them(tiny_pair_dirs):
    t, d = map(str, tiny_pair_dirs)
    pair = load_pair(t, d, device="cpu", threads=1)
    assert list(pair.load_s) == [s for s in LOAD_STAGES if s in pair.load_s]       # in the order they ran
    assert {"imports", "tokenizer", "weights", "self-checks", "warm-up"} <= set(pair.load_s)
    assert "conversion" not in pair.load_s                                          # no GGUF file here
    assert all(v >= 0 for v in pair.load_s.values())
    header = next(iter(SpeculativeDecoder(pair).generate("ab", max_new_tokens=2)))
    again = event_from_json(json.loads(json.dumps(header.to_json())))
    assert again.load_s == header.load_s == pair.load_s


def test_the_stages_read_as_one_line():
    text = load_stages_text({"imports": 4.12, "conversion": 0.001, "weights": 2.0, "warm-up": 0.8})
    assert text == "loaded in 6.9 s: imports 4.1 · weights 2.0 · warm-up 0.8 s"
    assert load_stages_text({}) == ""
    assert load_stages_text({"weights": 0.01, "warm-up": 0.02}) == "loaded in 0.0 s"   # a fast load: no empty list
