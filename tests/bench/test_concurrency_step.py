"""`doctor --batch` prices the step live batched decoding runs: its forwards and the work around them.

The old model priced a batch size's step from its forwards alone (K draft
forwards, one verify), and read 0.2–0.35 above live on the demo pair; these
hold the step's overhead term (timed by running the step, given or left out in
a server's file), the first draft forward that reads two tokens, and the
ragged batch both the live benchmark and the timing run. No timed assertions.
"""

from __future__ import annotations

import json

import pytest
import torch

from gammatune_tui.bench.batch_prices import BatchCosts, read_costs
from gammatune_tui.bench.deploy.concurrency import mid_answer, predict
from gammatune_tui.bench.deploy.concurrency_report import lines
from gammatune_tui.bench.live.batch_costs import time_batches
from gammatune_tui.bench.live.ragged import plain, speculative
from gammatune_tui.bench.sim.simulate import Trace
from gammatune_tui.errors import InvalidParameter
from tiny_models import make_llama, noisy_copy


def _trace() -> Trace:
    toks = [5, 6, 7, 8, 9, 10, 11, 12]
    return Trace(prompt_id="p", prompt_ids=[3], tokens=toks, draft_ids=list(toks), draft_prob=[0.9] * 8,
                 off_ids={}, off_prob={}, off_depth=0, eos_ids=[], max_new_tokens=8)


def _costs() -> BatchCosts:
    """Batch 1: a step 10 ms of forward and 2 ms around it; at K = 3 a first draft forward of 1.5 ms, later ones
    1 ms, a verify of 10 ms and 4 ms around it."""
    c = BatchCosts(context=0)
    c.step_s = {1: [0.010]}
    c.draft_s = {1: [0.001]}
    c.draft_first_s = {1: [0.0015]}
    c.verify_s = {1: {1: [0.010], 4: [0.010]}}
    c.overhead_s = {1: {1: [0.002], 4: [0.004]}}
    return c


def test_the_prediction_prices_the_steps_overhead_and_its_first_draft_forward():
    pred = predict([_trace()], _costs(), [3], max_new=8)
    cell = pred.cells[(1, 3)]
    # 4 tokens a step; the target alone pays 10 + 2 ms a token, a speculative step 1.5 + 2 × 1 + 10 + 4 ms
    assert cell.speedup == pytest.approx(4 * 12 / 17.5)
    saved = pred.to_json()
    assert saved["cells"][0]["overhead_ms"] == {"target_alone": 2.0, "speculative": 4.0}
    assert saved["cells"][0]["step_ms"] == {"target_alone": 12.0, "speculative": 17.5}
    assert saved["costs"]["overhead_ms"] == {"1": {"1": [2.0], "4": [4.0]}}
    assert saved["costs"]["draft_first_ms"] == {"1": [1.5]}


def test_a_servers_file_without_the_overhead_still_reads_and_says_so():
    data = {"1": {"step_ms": 10, "draft_ms": 1, "verify_ms": {"4": 10}}}
    pred = predict([_trace()], read_costs(data, "c.json"), [3], max_new=8)
    assert pred.cells[(1, 3)].speedup == pytest.approx(4 * 10 / 13)       # forwards alone, as before
    assert any("no overhead_ms" in n for n in pred.notes)
    assert "no overhead_ms" in " ".join(line.plain for line in lines(pred, "t", "d", set()))


@pytest.mark.parametrize("overhead, plain_ms, spec_ms", [(2, 12, 15), ({"1": 2, "4": 4}, 12, 17)])
def test_a_servers_file_gives_the_overhead_as_one_number_or_by_window(overhead, plain_ms, spec_ms):
    data = {"1": {"step_ms": 10, "draft_ms": 1, "verify_ms": {"4": 10}, "overhead_ms": overhead}}
    pred = predict([_trace()], read_costs(data, "c.json"), [3], max_new=8)
    assert pred.cells[(1, 3)].speedup == pytest.approx(4 * plain_ms / spec_ms)
    assert not pred.notes


@pytest.mark.parametrize("overhead, message", [(-1, "overhead_ms must be a number"),
                                               ({"0": 1}, "overhead window '0'"),
                                               ({"4": "x"}, r"overhead_ms\[4\] must be a number")])
def test_a_bad_overhead_is_one_line(overhead, message):
    data = {"1": {"step_ms": 10, "draft_ms": 1, "verify_ms": {"4": 10}, "overhead_ms": overhead}}
    with pytest.raises(InvalidParameter, match=message):
        read_costs(data, "c.json")


def test_a_speculative_row_reaches_further_into_its_cache_than_the_target_alone():
    """Halfway through 8 tokens: at 4 tokens a step, 1 step of K + 1 = 4 columns; at 2 a step, 2 steps of 4."""
    assert mid_answer({3: 4.0}, 8) == {0: (4, 4), 3: (4, 4)}
    assert mid_answer({3: 2.0}, 8)[3] == (8, 4)


@pytest.fixture(scope="module")
def tiny():
    target = make_llama(96, seed=3, hidden=32)
    return target, noisy_copy(target, seed=4, scale=0.5)


def test_the_ragged_batch_decodes_every_row_as_generate_does_alone(tiny):
    """Rows of unequal length, left-padded, rejected drafts masked: each row's tokens are its own greedy ones."""
    target, draft = tiny
    prompts = [[5, 9, 13, 2, 7], [11, 4], [8, 8, 30, 31, 40, 41, 42]]
    alone = [target.generate(torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long),
                             max_new_tokens=12, min_new_tokens=12, do_sample=False)[0, len(p):].tolist()
             for p in prompts]
    got, _ = plain(target, prompts, 12, pad=0)
    assert got == alone
    for k in (1, 3):
        rows, row_steps, steps, _ = speculative(target, draft, prompts, 12, k, pad=0)
        assert [r[:12] for r in rows] == alone and max(row_steps) == steps <= 12 and min(row_steps) > 0


def test_the_doctors_timing_runs_the_step_and_keeps_its_overhead_and_longer_speculative_cache(tiny):
    target, draft = tiny
    costs = time_batches(target, draft, [[5, 9, 13], [11, 4]], mid_answer({1: 1.5, 3: 2.0}, 12), [1, 3], [1, 3],
                         rounds=2)
    for b in (1, 3):
        assert set(costs.overhead_s[b]) == {1, 2, 4} and all(len(v) == 2 for v in costs.overhead_s[b].values())
        assert set(costs.verify_s[b]) == {1, 2, 4} and len(costs.draft_first_s[b]) == 2
    assert costs.context == 3 + 6 and costs.spec_context == {2: 3 + 8, 4: 3 + 12}
    saved = json.loads(json.dumps(costs.to_json()))
    assert set(saved["overhead_ms"]["3"]) == {"1", "2", "4"}
    assert predict([_trace()], costs, [1, 3], max_new=8).cells[(3, 3)].spec_overhead_s > 0


def test_a_source_without_a_draft_model_gets_its_verify_and_overhead_timed(tiny):
    """Prompt lookup or a head: no draft forward to time (0), the verify step and its overhead still are."""
    target, _ = tiny
    costs = time_batches(target, None, [[5, 9, 13]], mid_answer({2: 2.0}, 8), [2], [2], rounds=1)
    assert set(costs.verify_s[2]) == {1, 3} and costs.draft_s[2] == [0.0] and set(costs.overhead_s[2]) == {1, 3}
