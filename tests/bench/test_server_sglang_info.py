"""`doctor --server-log` on SGLang's `/server_info` (issue 43 item 1): a mean acceptance length and K read back, what
the mean lacks said in a line, each K′ < K given as the range a mean allows; a damaged response is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from gammatune_tui.bench.deploy.server_log import predictions, read
from gammatune_tui.bench.deploy.server_view import ServerView, render
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.cli import main
from server_log_cases import assert_refused

FIXTURE = Path(__file__).parent / "fixtures" / "sglang-server-info.json"
INFO = json.loads(FIXTURE.read_text())
COSTS = CostModel(draft_token_s=0.002, verify_s={1: 0.020})   # --costs 2,20


def _text(view: ServerView) -> str:
    console = Console(width=250, record=True)
    console.print(render(view))
    return " ".join(console.export_text().split())


def test_the_mean_and_k_are_read_and_what_the_mean_lacks_is_said(tmp_path):
    log = read(FIXTURE)
    assert (log.engine, log.k, log.steps, log.survival, log.per_step) == ("SGLang", 3, 0, [], None)
    assert log.mean_acceptance_length == pytest.approx(2.71) and log.draft_acceptance_rate == pytest.approx(1.71 / 3)
    assert "holds only avg_spec_accept_length" in log.notes[0] and "spec_correct_drafts_histogram" in log.notes[0]
    rows = predictions(log, COSTS)
    # K′ = 1: from 1.71 / 3 accepted (spread evenly) to 1 (the first position always accepted); K′ = 3: the mean
    assert [r.k for r in rows] == [1, 2, 3]
    assert rows[0].tokens_per_step == pytest.approx(1 + 1.71 / 3) and rows[0].high[0] == pytest.approx(2.0)
    assert rows[1].high[0] == pytest.approx(2.71) and rows[2].high is None
    assert rows[2].speedup == pytest.approx(2.71 * 20 / 26)
    text = _text(ServerView(log, "info.json", "d", 2.5, 0.5, [], rows, True))
    assert "steps not reported, K = 3" in text and "unknown (a mean only)" in text and "1.78–2.26×" in text
    assert "the server's K = 3 is predicted 2.08×; a smaller K′ could reach 2.26× if the acceptance sits at the front" in text


def test_a_floor_that_beats_the_server_says_k_is_not_the_best_and_ranks_average_unweighted(tmp_path):
    """K = 8 with a mean of 1.4 accepted and 5 ms a draft: even spread evenly, a short K′ beats K = 8."""
    info = dict(INFO, speculative_num_steps=8, internal_states=[
        dict(INFO["internal_states"][0], avg_spec_accept_length=2.2),
        dict(INFO["internal_states"][0], avg_spec_accept_length=2.6)])
    f = tmp_path / "info.json"
    f.write_text(json.dumps(info))
    log = read(f)
    assert log.mean_acceptance_length == pytest.approx(2.4)
    assert any("2 data-parallel ranks" in n and "unweighted" in n for n in log.notes)
    rows = predictions(log, CostModel(draft_token_s=0.005, verify_s={1: 0.020}))
    assert rows[0].speedup == pytest.approx((1 + 1.4 / 8) * 20 / 25) and rows[-1].speedup == pytest.approx(2.4 * 20 / 60)
    text = _text(ServerView(log, "info.json", "d", 2.5, 0.5, [], rows, True))
    assert "the server's K = 8 is not the best: --speculative-num-steps" in text and "predicted at least" in text


def test_k_from_a_state_and_a_tree_said(tmp_path):
    """Newer releases copy the server's arguments into each state: K is found there; a tree's rate is per its drafts."""
    info = json.loads(json.dumps(INFO))
    for name in ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"):
        del info[name]
    info["internal_states"][0].update(speculative_num_steps=3, speculative_eagle_topk=4, speculative_num_draft_tokens=8)
    f = tmp_path / "info.json"
    f.write_text(json.dumps(info))
    log = read(f)
    assert log.k == 3 and log.draft_acceptance_rate == pytest.approx(1.71 / 7)
    assert any("a tree (speculative_eagle_topk 4) verifies 7 drafts per step" in n for n in log.notes)


def test_the_whole_response_reads_through_doctor(capsys):
    with pytest.raises(SystemExit) as done:
        main(["doctor", "--server-log", str(FIXTURE), "--costs", "2,20"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0, out
    assert "SGLang log" in out and "steps not reported, K = 3" in out and "2.71" in out
    assert "holds only avg_spec_accept_length" in out and "a smaller K′ could reach" in out


def _info(**over) -> str:
    info = json.loads(json.dumps(INFO))
    state = over.pop("state", None)
    if state is not None:
        info["internal_states"][0].update(state)
    info.update(over)
    for k, v in over.items():
        if v is None:
            del info[k]
    return json.dumps(info)


BAD = {
    "states not a list": (_info(internal_states={"avg_spec_accept_length": 2.7}), "internal_states must be a list"),
    "mean a word": (_info(state={"avg_spec_accept_length": "high"}), "avg_spec_accept_length must be a mean"),
    "mean below 1": (_info(state={"avg_spec_accept_length": 0.4}), "must be a mean length of at least 1, got 0.4"),
    "mean past K + 1": (_info(state={"avg_spec_accept_length": 4.5}), "is more than K + 1 = 4"),
    "no K": (_info(speculative_num_steps=None), "speculative_num_steps is missing: K is unknown"),
    "K a word": (_info(speculative_num_steps="three"), "speculative_num_steps must be a count"),
    "no step yet": (_info(state={"avg_spec_accept_length": None}), "no speculative step yet"),
    "not speculating": (_info(speculative_algorithm=None, state={"avg_spec_accept_length": None})
                        .replace('"internal_states"', '"speculative_algorithm": null, "internal_states"'),
                        "the server does not speculate"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_damaged_response_is_one_line_naming_the_field_and_exit_2(tmp_path, capsys, name):
    content, needle = BAD[name]
    assert_refused(tmp_path / "info.json", content, needle, capsys)
