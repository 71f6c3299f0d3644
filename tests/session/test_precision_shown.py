"""Each model's precision and size wherever the dtype used to be the only word (issue 24 row 9, issue 26).

`--quantize int8` quantized the target while the header, recordings and
summary still said "cpu float32"; a self-draft beside a float32 target made
one dtype for the pair wrong twice over.
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, with_draft
from gammatune_tui.engine.events import SessionHeader
from gammatune_tui.engine.loading.models import load_pair
from gammatune_tui.render.printer import header_text
from gammatune_tui.render.session_info import header_lines
from gammatune_tui.session.turns import pair_title


def _header(pair, **kw) -> SessionHeader:
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), SamplingConfig(), **kw)
    return next(iter(dec.generate("abc", max_new_tokens=2)))


def test_a_quantized_target_is_named_so_in_the_header_and_its_text(tiny_pair_dirs):
    pytest.importorskip("optimum.quanto")
    t, d = map(str, tiny_pair_dirs)
    pair = load_pair(t, d, device="cpu", dtype="float32", quantize="int8", engine="eager", warmup=False)
    h = _header(pair)
    assert h.target_precision == "int8 (quanto)" and h.draft_precision == "float32"
    text = header_text(h).plain
    assert "(int8 (quanto), " in text and "cpu float32" not in text
    assert "int8 (quanto)" in pair_title(pair)


def test_a_self_draft_is_named_with_what_it_adds(tiny_pair):
    h = _header(tiny_pair, drafter="self:int4")
    lines = header_lines(h).plain
    assert "(float32, " in lines and "self:int4 (int4 g32, +" in lines
    sib = with_draft(tiny_pair, "self:int4")
    title = pair_title(sib)
    assert "self:int4" in title and "float32" in title and "int4 g32, +" in title


def test_older_recordings_without_precisions_still_show_their_dtype(tiny_pair):
    import dataclasses

    h = dataclasses.replace(_header(tiny_pair), target_precision="", draft_precision="", target_bytes=0,
                            draft_bytes=0)
    assert "cpu float32" in header_text(h).plain
    assert "cpu float32" in header_lines(h).plain


def test_the_subtitle_says_its_sizes_are_in_memory(tiny_pair):
    """`gammatune models` lists sizes on disk; the subtitle's are the loaded weights': unlabelled, they disagreed."""
    title = pair_title(with_draft(tiny_pair, "self:int4"))
    sizes = title[title.index(" (float32, "):title.index(") · ") + 1]
    assert sizes.startswith(" (float32, ") and sizes.endswith(" in memory)") and "int4 g32, +" in sizes


@pytest.mark.parametrize("source, shown", [("prompt-lookup", "+ prompt lookup"), ("ngram-pool", "+ ngram pool")])
def test_the_subtitle_names_the_source_that_drafts_without_a_model(source, shown):
    pair = load_pair(demo=True, drafter=source, warmup=False)
    title = pair_title(pair)
    assert title.startswith("demo target " + shown), title
