"""`doctor --server-log FILE` names the pitfalls the server's own data shows (issue 43 item 3), one line each with its
source, under the verdict; a log that cannot show one says which and why (bench/doctor/pitfalls_data.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from rich.console import Console

from gammatune_tui.bench.deploy.server_log import predictions, read
from gammatune_tui.bench.deploy.server_view import ServerView, render
from gammatune_tui.bench.doctor.pitfalls_data import RULES, data_pitfalls
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
COSTS = CostModel(draft_token_s=0.002, verify_s={1: 0.020})   # --costs 2,20


def _view(path: Path, ours: list[float] | None = None) -> ServerView:
    log = read(path)
    view = ServerView(log, path.name, "d", math.nan, math.nan, ours or [], predictions(log, COSTS), True)
    view.pitfalls, view.unchecked = data_pitfalls(view)
    return view


# each pitfall: the fixture that shows it, and the words of its line
CASES = {
    "episodic zero acceptance": ("vllm-detailed-loop.jsonl",
                                 "request 2 of 3 accepted nothing for 12 steps in a row (steps 15–26) where 31% of "
                                 "all steps accept nothing: the repetition-loop pattern of vLLM #55357"),
    "position-1 collapse": ("vllm-position1-collapse.prom",
                            "only 20% of steps accept the first draft, yet 89% of the drafts after an accepted one are "
                            "accepted too: the first position is starved"),
    "K past the best": ("vllm-k-past-best.json",
                        "K = 8 is past the best: the drafts past position 2 are accepted in only 15% of steps, so "
                        "num_speculative_tokens 2 is predicted 1.75× against 1.29× at 8"),
    "long-context decay": ("sglang-long-context.jsonl",
                           "mean acceptance length by prompt length <1k tokens: 3.32 (2 req) · 4k–16k tokens: 2.52 "
                           "(1 req) · 16k–64k tokens: 1.78 (2 req): the long-context decay of vLLM #52258"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_pitfall_is_found_in_the_log_that_shows_it(name):
    fixture, words = CASES[name]
    view = _view(FIXTURES / fixture)
    lines = dict(view.pitfalls)
    assert name in lines and words in lines[name], view.pitfalls
    console = Console(width=400, record=True)
    console.print(render(view))
    assert f"pitfall: {name} — {' '.join(lines[name].split())}" in " ".join(console.export_text().split())
    js = view.to_json()["pitfalls"]
    assert {"name": name, "line": lines[name]} in js


def test_a_healthy_log_has_none_and_every_rule_has_a_case():
    assert {n for n, _ in RULES} == set(CASES)
    view = _view(FIXTURES / "sglang-responses.jsonl")
    assert view.pitfalls == []
    assert any(u.startswith("episodic zero-acceptance runs (need per-step arrays") for u in view.unchecked)


def test_what_a_log_cannot_show_is_said_not_passed():
    """A scrape has no per-step arrays and no prompt lengths; /server_info not even per-position shares."""
    scrape = _view(FIXTURES / "vllm-metrics.prom")
    assert [u.split(" (")[0] for u in scrape.unchecked] == ["episodic zero-acceptance runs", "long-context decay"]
    info = _view(FIXTURES / "sglang-server-info.json")
    assert [u.split(" (")[0] for u in info.unchecked] == ["episodic zero-acceptance runs", "position-1 collapse",
                                                          "long-context decay"]
    console = Console(width=400, record=True)
    console.print(render(scrape))
    assert "not checked (this log cannot show them): episodic zero-acceptance runs" in console.export_text()


def test_position_1_against_the_pairs_hindsight(tmp_path):
    """35 % at position 1 and little after it is no collapse by the log alone, but is one beside a hindsight of 85 %."""
    f = tmp_path / "m.prom"
    f.write_text((FIXTURES / "vllm-position1-collapse.prom").read_text()
                 .replace(" 80.0", " 140.0").replace(" 72.0", " 40.0").replace(" 64.0", " 20.0")
                 .replace(" 56.0", " 10.0").replace(" 272.0", " 210.0"))
    assert "position-1 collapse" not in dict(_view(f).pitfalls)
    line = dict(_view(f, ours=[0.85, 0.7, 0.5, 0.3]).pitfalls)["position-1 collapse"]
    assert line.startswith("only 35% of steps accept the first draft, where the pair's hindsight here accepts 85%")


def test_a_loop_is_not_called_one_when_zeros_are_everywhere(tmp_path):
    """Runs of twelve zeros where 92 % of all steps accept nothing anyway are chance, not an episode."""
    acc = ([0] * 12 + [1]) * 5
    block = {"num_spec_tokens": 3, "num_spec_steps": 65, "num_draft_tokens": 195, "num_accepted_draft_tokens": 5,
             "acceptance_histogram": [60, 5, 0, 0], "per_step_accepted": acc, "per_step_drafted": [3] * 65}
    f = tmp_path / "flat.json"
    f.write_text(json.dumps({"metrics": {"speculative_decoding": block}}))
    assert "episodic zero acceptance" not in dict(_view(f).pitfalls)


def test_the_lines_print_under_the_verdict_of_doctor(capsys):
    """Reachable from the CLI: `doctor --server-log FILE` prints the pitfall under its verdict."""
    with pytest.raises(SystemExit) as done:
        main(["doctor", "--server-log", str(FIXTURES / "vllm-detailed-loop.jsonl"), "--costs", "2,20"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0, out
    verdict = out.index("the server's K = 3 is")
    assert out.index("pitfall: episodic zero acceptance — request 2 of 3 accepted nothing for 12 steps") > verdict


def test_k_past_the_best_from_a_mean_alone_only_when_its_least_beats_k(tmp_path):
    """SGLang's /server_info at K = 8, a mean of 1.4 accepted, 5 ms a draft: K′ = 1 beats K however it is spread."""
    info = json.loads((FIXTURES / "sglang-server-info.json").read_text())
    info["speculative_num_steps"] = 8
    info["internal_states"][0]["avg_spec_accept_length"] = 2.4
    f = tmp_path / "info.json"
    f.write_text(json.dumps(info))
    log = read(f)
    view = ServerView(log, f.name, "d", math.nan, math.nan, [],
                      predictions(log, CostModel(draft_token_s=0.005, verify_s={1: 0.020})), True)
    line = dict(data_pitfalls(view)[0])["K past the best"]
    assert line.startswith("K = 8 is past the best: --speculative-num-steps 1 is predicted at least 0.94× against 0.80×")
    assert "K past the best" not in dict(_view(FIXTURES / "sglang-server-info.json").pitfalls)   # 2.26× is only a top


def test_a_prompt_length_that_is_not_a_count_is_one_line(tmp_path, capsys):
    from server_log_cases import assert_refused

    bad = (FIXTURES / "vllm-k-past-best.json").read_text().replace('"prompt_tokens": 512', '"prompt_tokens": "many"')
    assert_refused(tmp_path / "v.json", bad, "usage.prompt_tokens must be a count, got 'many'", capsys)
