"""`doctor --server-log` on logs no server could write (issue 40 rows 4-7, 12a): one line and exit 2, never a
traceback or advice from impossible numbers; a huge window is priced only as far as the log can inform."""

from __future__ import annotations

import json
import time

import pytest

from gammatune_tui.bench.deploy.server_log import ServerLog, ServerLogError, WindowPrediction, predictions, read
from gammatune_tui.bench.deploy.server_view import ServerView, render
from gammatune_tui.bench.sim.cost_model import CostModel
from server_log_cases import assert_refused

FLAT = CostModel(draft_token_s=1.0, verify_s={1: 10.0})


def _vllm(**over) -> str:
    block = {"num_spec_tokens": 3, "num_spec_steps": 4, "num_draft_tokens": 12, "num_accepted_draft_tokens": 6,
             "acceptance_histogram": [1, 1, 1, 1], "mean_acceptance_length": 2.5, "draft_acceptance_rate": 0.5}
    block.update(over)
    return json.dumps({"id": "cmpl-1", "metrics": {"speculative_decoding": block}})


def _llama(pos: str = "0.889, 0.7, 0.633", a: int = 48, gt: int = 144, at: int = 90) -> str:
    return (f"statistics     draft-simple: #calls(b,g,a) =    1     50     {a}, #gen drafts =     48, "
            f"#acc drafts =    40, #gen tokens =    {gt}, #acc tokens =    {at}, #mean acc len = 2.88, "
            f"#acc rate/pos = ({pos}), dur(b,g,a) = 0.010, 12.000, 0.100 ms\n")


BAD = {
    # row 4: a dense histogram longer than K + 1, an older sparse one with a key above K
    "dense histogram past K": (_vllm(acceptance_histogram=[1, 1, 1, 1, 0, 0]), "acceptance_histogram has 6"),
    "sparse key above K": (_vllm(acceptance_histogram={"0": 1, "1": 1, "2": 1, "7": 1}), "key 7 is outside"),
    "sparse key not a number": (_vllm(acceptance_histogram={"x": 4}), "key 'x'"),
    # row 5: a non-number in llama.cpp's rates
    "llama rate abc": (_llama("0.889, abc, 0.633"), "not a list of numbers"),
    # row 6: impossible counts and rates
    "accepted > drafted": (_vllm(num_draft_tokens=3, num_accepted_draft_tokens=5,
                                 acceptance_histogram=[2, 1, 0, 1], num_spec_steps=4), "more than num_draft_tokens"),
    "drafted > steps × K": (_vllm(num_draft_tokens=40), "more than num_spec_steps"),
    "negative histogram count": (_vllm(acceptance_histogram=[3, 1, 1, -1]), "must be a count"),
    "negative per-step count": (_vllm(per_step_accepted=[-2, 1, 2, 3], per_step_drafted=[3, 3, 3, 3]),
                                "per_step_accepted[0] must be a count"),
    "per-step accepted > drafted": (_vllm(per_step_accepted=[3, 1, 2, 3], per_step_drafted=[1, 3, 3, 3]),
                                    "step 0 accepted 3 of 1"),
    "histogram disagrees with accepted": (_vllm(num_accepted_draft_tokens=9), "the histogram accepts 6"),
    "llama rate above 1": (_llama("0.889, 1.7, 0.633"), "outside 0..1"),
    "llama rate nan": (_llama("0.889, nan, 0.633"), "outside 0..1"),
    "llama rate inf": (_llama("inf, 0.5, 0.633"), "outside 0..1"),
    "llama accepted > drafted": (_llama(gt=50, at=90), "more tokens (90) than it drafted (50)"),
    "vllm with no steps": (_vllm(num_spec_steps=0, num_draft_tokens=0, num_accepted_draft_tokens=0,
                                 acceptance_histogram=[0, 0, 0, 0]), "nothing to go on"),
    "llama with no steps": (_llama(a=0, gt=0, at=0), "nothing to go on"),
    "choices not a list": ('{"choices": 5}', "none of the formats read (vLLM per-request spec-decode metrics"),
    # item 43.1: a missing field is named as missing
    "no num_spec_steps": (_vllm(num_spec_steps=None).replace('"num_spec_steps": null, ', ''),
                          "num_spec_steps is missing"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_an_impossible_or_damaged_log_is_one_line_naming_the_field_and_exit_2(tmp_path, capsys, name):
    content, needle = BAD[name]
    assert_refused(tmp_path / "server.log", content, needle, capsys)


def test_a_huge_num_spec_tokens_is_priced_only_as_far_as_the_log_informs(tmp_path):
    """Row 7: K = 1,000,000 with runs of at most 3 answers at once, in a table of a screen, the server's K last."""
    f = tmp_path / "big.json"
    f.write_text(_vllm(num_spec_tokens=1_000_000, acceptance_histogram={"0": 1, "1": 1, "2": 1, "3": 1}))
    start = time.monotonic()
    log = read(f)
    rows = predictions(log, FLAT)
    assert time.monotonic() - start < 5
    assert [w.k for w in rows] == [1, 2, 3, 1_000_000] and len(log.survival) == 3
    wide = tmp_path / "wide.json"   # a long run seen: 1..16, then doublings, the run itself, and K
    wide.write_text(_vllm(num_spec_tokens=2000, num_spec_steps=2, num_draft_tokens=1000,
                          num_accepted_draft_tokens=700, acceptance_histogram={"0": 1, "700": 1}))
    ks = [w.k for w in predictions(read(wide), FLAT)]
    assert ks == list(range(1, 17)) + [32, 64, 128, 256, 512, 700, 2000] and len(ks) <= 24


def _tied_view() -> ServerView:
    log = ServerLog("vLLM", 64, 10, 640, 30, [0.5] * 64)
    windows = [WindowPrediction(4, 3.0, 2.061), WindowPrediction(64, 3.0, 2.058)]
    return ServerView(log, "x.json", "d", 2.0, 0.5, [0.5] * 64, windows, True)


def test_a_tie_is_called_a_tie(capsys):
    """Row 12a: 2.061× against 2.058× both print 2.06×: not 'K = 64 is not the best'."""
    from rich.console import Console
    Console(width=200).print(render(_tied_view()))
    text = " ".join(capsys.readouterr().out.split())
    assert "is not the best" not in text and "a tie: num_speculative_tokens 4 and the server's K = 64" in text
    js = _tied_view().to_json()
    assert js["tie"] and js["server_k_is_best"]


def test_k_comes_from_the_dense_histogram_when_num_spec_tokens_is_absent_and_a_line_says_so(tmp_path, capsys):
    """Issue 43 item 1: no num_spec_tokens, a dense histogram of 4 → K = 3, with a line; sparse → named missing."""
    f = tmp_path / "nok.json"
    f.write_text(_vllm(num_spec_tokens=None).replace('"num_spec_tokens": null, ', ''))
    log = read(f)
    assert log.k == 3 and log.notes == ["num_spec_tokens is absent: K = 3 is taken from acceptance_histogram's "
                                        "length (4 entries)"]
    from rich.console import Console
    view = ServerView(log, "nok.json", "d", 2.0, 0.5, [0.5] * 3, predictions(log, FLAT), True)
    Console(width=200).print(render(view))
    assert "K = 3 is taken from acceptance_histogram's length" in capsys.readouterr().out
    sparse = tmp_path / "sparse.json"
    sparse.write_text(_vllm(num_spec_tokens=None, acceptance_histogram={"0": 1, "1": 1, "2": 1, "3": 1})
                      .replace('"num_spec_tokens": null, ', ''))
    with pytest.raises(ServerLogError, match="num_spec_tokens is missing"):
        read(sparse)
