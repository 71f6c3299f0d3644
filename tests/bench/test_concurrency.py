"""`doctor --batch`: the best K per batch size, the crossover, vLLM's table and SGLang's tiers, from prices a user can
check by hand, and the command line's checks before any model loads."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.bench.batch_prices import BatchCosts, parse_batches, read_costs
from gammatune_tui.bench.deploy.concurrency import predict
from gammatune_tui.bench.deploy.concurrency_report import lines, table
from gammatune_tui.bench.sim.simulate import Trace
from gammatune_tui.cli import main
from gammatune_tui.errors import InvalidParameter


def _trace() -> Trace:
    """Eight tokens the draft gets all right: a window of K keeps every draft (K + 1 tokens a step)."""
    toks = [5, 6, 7, 8, 9, 10, 11, 12]
    return Trace(prompt_id="p", prompt_ids=[3], tokens=toks, draft_ids=list(toks), draft_prob=[0.9] * 8,
                 off_ids={}, off_prob={}, off_depth=0, eos_ids=[], max_new_tokens=8)


def _costs() -> BatchCosts:
    """Batch 1: a verify of any window costs one step (10 ms), a draft 1 ms. Batch 64: the verify grows with the
    window (10 ms a token: compute-bound), so no K pays there."""
    c = BatchCosts(context=0, given=True)
    c.step_s = {1: [0.010], 64: [0.010]}
    c.draft_s = {1: [0.001], 64: [0.001]}
    c.verify_s = {1: {k: [0.010] for k in range(1, 6)}, 64: {k: [0.010 * k] for k in range(1, 6)}}
    return c


def test_the_prediction_is_the_formula_a_user_can_check():
    pred = predict([_trace()], _costs(), [1, 3], max_new=8)
    # K = 3 at batch 1: 8 tokens in 2 steps = 4 a step; a step costs 3 drafts + one verify = 13 ms against 10 per token
    assert pred.cells[(1, 3)].speedup == pytest.approx(4 * 10 / 13)
    assert pred.best(1).k == 3
    # at batch 64 a verify of K + 1 costs K + 1 steps, and the drafts on top: nothing pays
    assert pred.cells[(64, 3)].speedup == pytest.approx(4 * 10 / (3 + 40))
    assert pred.best(64).k == 0 and pred.crossover() == 64


def test_vllm_schedule_and_sglang_tiers_follow_the_best_k():
    pred = predict([_trace()], _costs(), [1, 3], max_new=8)
    assert pred.vllm_schedule() == [[1, 63, 3], [64, 64, 0]]   # from 1, as vLLM requires; K = 0 allowed
    assert pred.sglang_tiers()["64"] == {"candidate_steps": [0]}
    assert 3 in pred.sglang_tiers()["1"]["candidate_steps"]
    text = " ".join(line.plain for line in lines(pred, "t", "d", {"vllm", "sglang"}))
    assert '"num_speculative_tokens_per_batch_size": [[1, 63, 3], [64, 64, 0]]' in text
    assert "Speculation stops paying between batch 1 and 64" in text
    assert table(pred).row_count == 2


def test_speculation_that_pays_everywhere_says_so_and_keeps_the_table_one_range():
    c = _costs()
    c.verify_s[64] = dict(c.verify_s[1])
    pred = predict([_trace()], c, [1, 3], max_new=8)
    assert pred.crossover() is None and pred.vllm_schedule() == [[1, 64, 3]]


@pytest.mark.parametrize("text, message", [
    ("0,4", "batch sizes run from 1 to 1024"), ("1,x", "whole numbers"), ("2000", "1 to 1024"),
])
def test_bad_batch_lists_are_one_line(text, message):
    with pytest.raises(InvalidParameter, match=message):
        parse_batches(text)


@pytest.mark.parametrize("data, message", [
    ([], "an object keyed by batch size"),
    ({"one": {}}, "not a positive whole number"),
    ({"1": {"step_ms": 10, "draft_ms": 1}}, "verify_ms is missing"),
    ({"1": {"step_ms": -1, "draft_ms": 1, "verify_ms": {"2": 11}}}, "step_ms must be a number"),
    ({"1": {"step_ms": 10, "draft_ms": 1, "verify_ms": {"0": 11}}}, "window '0'"),
])
def test_a_servers_prices_are_checked_field_by_field(data, message):
    with pytest.raises(InvalidParameter, match=message):
        read_costs(data, "c.json")


def test_batch_costs_file_is_checked_before_any_model_loads(tmp_path, capsys):
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"1": {"step_ms": 10, "draft_ms": 1, "verify_ms": {"2": 11}}}))
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--batch", "1,4", "--batch-costs", str(bad)])
    assert exc.value.code == 2
    assert "has no prices for batch 4" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--batch", "1,4", "--batch-costs", str(tmp_path / "none.json")])
    assert exc.value.code == 2 and "no such file" in capsys.readouterr().err


def test_a_self_draft_gets_the_schedule_without_a_model_path():
    pred = predict([_trace()], _costs(), [1, 3], max_new=8)
    text = " ".join(line.plain for line in lines(pred, "t", "self:int4", {"vllm"}))
    assert '"model": "self:int4"' not in text and "[[1, 63, 3], [64, 64, 0]]" in text


@pytest.mark.slow
def test_doctor_batch_on_the_demo_pair_prints_and_saves_the_schedule(tmp_path, capsys):
    """The whole path a user takes: the doctor examines the demo draft, then prices it at the batch sizes given
    (here a server's own prices, so the test does not time forwards) and saves what it printed."""
    prices = {str(b): {"step_ms": 4.0, "draft_ms": 1.0, "verify_ms": {"2": 4.2 * b ** 0.5, "3": 4.4 * b ** 0.5}}
              for b in (1, 16)}
    (tmp_path / "c.json").write_text(json.dumps(prices))
    out = tmp_path / "d.json"
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--batch-costs", str(tmp_path / "c.json"), "--for", "vllm", "--limit", "1", "-n", "12",
              "--self-drafts", "none", "--gammas", "1,2", "--json", str(out)])
    assert exc.value.code == 0
    printed = capsys.readouterr().out
    assert "Speculation under concurrency" in printed and "num_speculative_tokens_per_batch_size" in printed
    saved = json.loads(out.read_text())["concurrency"]
    assert saved["batches"] == [1, 16] and saved["costs"]["given"] is True
    assert saved["vllm_num_speculative_tokens_per_batch_size"][0][0] == 1
