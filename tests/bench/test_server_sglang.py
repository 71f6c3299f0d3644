"""`doctor --server-log` on SGLang's per-request `meta_info` (issue 43 item 1): the current field names and the older
ones, summed over responses; K taken from the histogram and said so; a damaged response is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gammatune_tui.bench.deploy.server_log import read
from gammatune_tui.cli import main
from server_log_cases import assert_refused

LINES = (Path(__file__).parent / "fixtures" / "sglang-responses.jsonl").read_text().splitlines()


def test_responses_are_summed_and_k_comes_from_the_histogram(tmp_path, capsys):
    f = tmp_path / "sglang.jsonl"
    f.write_text("\n".join(LINES) + "\n")
    log = read(f)
    assert (log.engine, log.k, log.steps, log.drafted, log.accepted, log.requests) == ("SGLang", 3, 20, 60, 35, 2)
    assert log.survival == [17 / 20, 12 / 20, 6 / 20]   # steps accepting at least 1, 2, 3 drafts
    assert any("K = 3 is taken from the histogram" in n for n in log.notes or [])
    with pytest.raises(SystemExit) as done:
        main(["doctor", "--server-log", str(f), "--costs", "2,20"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0, out
    assert "SGLang log" in out and "2 request(s), 20 steps, K = 3" in out and "0.85 0.60 0.30" in out


def test_the_older_field_names_read_the_same(tmp_path):
    old = []
    for line in LINES:
        obj = json.loads(line)
        m = obj["meta_info"]
        m["spec_accept_token_num"] = m.pop("spec_num_correct_drafts")
        m["spec_draft_token_num"] = m.pop("spec_num_proposed_drafts")
        for alias in ("spec_accepted_drafts", "spec_proposed_drafts", "spec_correct_drafts_histogram"):
            m.pop(alias)
        old.append(json.dumps(obj))
    f = tmp_path / "old.json"
    f.write_text("[" + ",".join(old) + "]")
    log = read(f)
    assert (log.steps, log.drafted, log.accepted, log.survival) == (20, 60, 35, [17 / 20, 12 / 20, 6 / 20])


def _one(**over) -> str:
    obj = json.loads(LINES[0])
    obj["meta_info"].update(over)
    for k, v in over.items():
        if v is None:
            del obj["meta_info"][k]
    return json.dumps(obj)


BAD = {
    "accepted > proposed": (_one(spec_num_correct_drafts=40), "more than spec_num_proposed_drafts"),
    "negative steps": (_one(spec_verify_ct=-1), "spec_verify_ct must be a count"),
    "histogram not a list": (_one(spec_correct_drafts_histogram="1,2"), "must be a list of step counts"),
    "histogram negative": (_one(spec_correct_drafts_histogram=[1, 2, -3, 4]), "[2] must be a count"),
    "histogram vs steps": (_one(spec_correct_drafts_histogram=[1, 2, 3, 5]), "the histogram counts 11 steps"),
    "histogram vs accepted": (_one(spec_correct_drafts_histogram=[2, 1, 3, 4]), "the histogram accepts 19"),
    "proposed missing": (_one(spec_num_proposed_drafts=None, spec_proposed_drafts=None),
                         "spec_num_proposed_drafts is missing"),
    "no speculative step": (_one(spec_verify_ct=0), "no speculative step"),
    "a float count": (_one(spec_verify_ct=10.5), "spec_verify_ct must be a count"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_damaged_response_is_one_line_naming_the_field_and_exit_2(tmp_path, capsys, name):
    content, needle = BAD[name]
    assert_refused(tmp_path / "sglang.json", content, needle, capsys)
