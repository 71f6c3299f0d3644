"""Greedy differences judged by the precision (issue 42 item 4; docs/precision.md).

A bf16 k-token verify rounds differently from one-token decoding, so at a
near-tie it may pick the other token: compare, bench and the JSON say so
instead of "NOT lossless". Any difference in float32, or one where the
top two logits sat wider apart than the precision's rounding, stays a fault.
Before this change every such difference read "NOT lossless".
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gammatune_tui.engine.events import SessionHeader, StepEvent
from gammatune_tui.engine.plain import plain_decode
from gammatune_tui.render.tables import lossless_text
from gammatune_tui.session.compare import MethodRun, Reference, check_lossless, summarize
from gammatune_tui.session.lossless import rounding
from gammatune_tui.session.synthetic import synthetic_session


def _at(dtype: str, method: str = "specdecode", flip: int | None = None) -> MethodRun:
    """A greedy synthetic run whose target ran at `dtype`; `flip`: that token's id changed (the texts part there)."""
    out, seen = [], 0
    for ev in synthetic_session(method):
        if isinstance(ev, SessionHeader):
            ev = dataclasses.replace(ev, dtype=dtype)
        elif isinstance(ev, StepEvent) and flip is not None and seen <= flip < seen + len(ev.emitted):
            em = list(ev.emitted)
            em[flip - seen] = dataclasses.replace(em[flip - seen], id=em[flip - seen].id + 1)
            ev = dataclasses.replace(ev, emitted=em)
        if isinstance(ev, StepEvent):
            seen += len(ev.emitted)
        out.append(ev)
    return MethodRun.from_events(out)


def _reference(run: MethodRun, gap_at: dict[int, float], top: float = 33.5) -> Reference:
    """Target-only's text (the unflipped run's) with its (top logit, top-two gap) per token."""
    ids = tuple(run.token_ids)
    margins = tuple((top, gap_at.get(i, 5.0)) for i in range(len(ids)))
    return Reference((10.0, 11.0), len(ids), ids, margins=margins)


def test_rounding_per_precision():
    # bfloat16 keeps 7 mantissa bits: a logit near 33 is 0.25 from its neighbours; 8 of those is the tie window
    assert rounding("bfloat16", 33.5) == pytest.approx(2.0)
    assert rounding("float16", 33.5) == pytest.approx(0.25)
    assert rounding("torch.bfloat16", -3.0) == pytest.approx(8 * 2 ** (1 - 7))
    assert rounding("float32", 33.5) is None   # exact expected: no window at all


def test_bf16_near_tie_is_explained_not_a_fault():
    clean = _at("bfloat16")
    ref = _reference(clean, {13: 0.03})
    summary = summarize([_at("bfloat16", flip=13)], ref)
    v = summary.lossless
    assert v.checked and not v.identical and v.near_tie and not v.fault
    assert "NOT lossless" not in v.message
    assert v.message.startswith("specdecode differs from target-only at token 13: a near-tie in bfloat16 "
                                "(top two logits 0.03 apart")
    assert "a k-token verify rounds differently from one-token decoding" in v.message
    assert lossless_text(summary).style == "yellow"


def test_float32_difference_is_a_fault_even_at_a_near_tie():
    clean = _at("float32")
    v = check_lossless([_at("float32", flip=13)], _reference(clean, {13: 0.03}))
    assert v.fault and not v.near_tie
    assert v.message.startswith("NOT lossless: specdecode differs from target-only at token 13")


def test_bf16_wide_gap_is_a_fault():
    clean = _at("bfloat16")
    v = check_lossless([_at("bfloat16", flip=13)], _reference(clean, {13: 3.5}))
    assert v.fault and not v.near_tie
    assert "NOT lossless" in v.message and "3.50 apart, wider than bfloat16's rounding of 2.00" in v.message
    assert lossless_text(summarize([_at("bfloat16", flip=13)], _reference(clean, {13: 3.5}))).style == "bold red"


def test_a_fault_outranks_a_near_tie_among_methods():
    clean = _at("bfloat16")
    ref = _reference(clean, {4: 0.1, 9: 4.0})
    v = check_lossless([_at("bfloat16", "specdecode", flip=4), _at("bfloat16", "gammatune", flip=9)], ref)
    assert v.fault and v.position == 9 and v.method == "gammatune"


def test_bf16_recording_without_logits_is_not_called_a_fault():
    a, b = _at("bfloat16", "specdecode"), _at("bfloat16", "gammatune", flip=6)
    v = check_lossless([a, b])
    assert not v.fault and not v.identical and "not judged" in v.message and "NOT lossless" not in v.message
    assert check_lossless([_at("float32"), _at("float32", "gammatune", flip=6)]).fault


def test_plain_decode_records_each_tokens_top_two_gap(tiny_pair):
    run = plain_decode(tiny_pair, [5, 6, 7], 6, eos_ids=())
    assert len(run.margins) == run.tokens == 6
    ids = [5, 6, 7] + run.token_ids
    with torch.no_grad():
        logits = tiny_pair.target(torch.tensor([ids])).logits[0, 2:-1].float()
    top2 = logits.topk(2).values
    for (top, gap), want in zip(run.margins, top2):
        assert top == pytest.approx(float(want[0]), abs=1e-4)
        assert gap == pytest.approx(float(want[0] - want[1]), abs=1e-4)
