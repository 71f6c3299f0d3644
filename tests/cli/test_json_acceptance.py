"""`run --json` and `compare --json FILE`: acceptance in vLLM's per-request terms, beside the numbers they had."""

from __future__ import annotations

import json
import statistics

from gammatune_tui.engine.events import SessionSummary, StepEvent, event_from_json
from gammatune_tui.session.recording import read_recording
from clihelpers import assert_one_line, invoke

VLLM_NAMES = ("mean_acceptance_length", "draft_acceptance_rate", "acceptance_histogram", "num_spec_steps",
              "num_draft_tokens", "num_accepted_draft_tokens", "num_accepted_tokens_per_pos",
              "per_position_acceptance_rate", "per_step_accepted", "per_step_drafted")


def test_run_json_summary_carries_vllm_acceptance_metrics_and_still_replays(capsys, pair_args, tmp_path):
    rec = tmp_path / "run.jsonl"
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "12", "--json", "--record", str(rec),
                             "-t", "0", "--method", "specdecode", "--gamma", "3"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    summary = json.loads(lines[-1])
    sd = summary["speculative_decoding"]
    assert all(name in sd for name in VLLM_NAMES), sorted(sd)
    steps = [event_from_json(json.loads(line)) for line in lines[1:-1]]
    assert all(isinstance(s, StepEvent) for s in steps)
    spec = [s for s in steps if s.drafted]
    assert sd["per_step_accepted"] == [s.accepted for s in spec]
    assert sd["per_step_drafted"] == [len(s.drafted) for s in spec]
    assert sd["num_spec_steps"] == len(spec) and sd["num_accepted_draft_tokens"] == summary["accepted"]
    assert sd["num_draft_tokens"] == summary["drafted"]
    assert sd["mean_acceptance_length"] == 1 + summary["accepted"] / len(spec)   # the bonus token included
    assert sum(sd["acceptance_histogram"]) == len(spec)
    # the recording keeps its schema: every line the same, the summary without the derived object
    recorded = rec.read_text(encoding="utf-8").splitlines()
    assert recorded[:-1] == lines[:-1]
    assert json.loads(recorded[-1]) == {k: v for k, v in summary.items() if k != "speculative_decoding"}
    # and the --json stream itself reads back as a recording
    saved = tmp_path / "stdout.jsonl"
    saved.write_text(out, encoding="utf-8")
    events = read_recording(saved).events
    assert isinstance(events[-1], SessionSummary) and events[-1].accepted == summary["accepted"]


def test_compare_json_file_has_each_contestants_settings_speedup_spread_and_vllm_metrics(capsys, pair_args,
                                                                                          tmp_path):
    out_file = tmp_path / "race.json"
    code, out, err = invoke(["compare", "--print", "def f(x):", *pair_args, "-M", "specdecode,gammatune+", "-n", "8",
                             "--repeats", "2", "-t", "0", "--gamma", "3", "--json", str(out_file)], capsys)
    assert code == 0, err
    data = json.loads(out_file.read_text(encoding="utf-8"))
    assert [c["label"] for c in data["contestants"]] == ["specdecode", "gammatune+"]
    assert data["target_only"]["tokens_per_s"]["runs"] and len(data["target_only"]["tokens_per_s"]["runs"]) == 2
    for c in data["contestants"]:
        assert c["settings"]["method"] == c["label"] and c["settings"]["gamma0"] == 3
        s = c["speedup_over_target_only"]
        assert len(s["per_round"]) == 2 and s["low"] <= s["high"]
        assert s["median"] == c["tokens_per_s"]["median"] / statistics.median_low(data["target_only"]["tokens_per_s"]["runs"])
        sd = c["speculative_decoding"]
        assert all(name in sd for name in VLLM_NAMES), sorted(sd)
        assert sd["mean_acceptance_length"] == 1 + sd["num_accepted_draft_tokens"] / sd["num_spec_steps"]
    assert data["lossless"]["checked"] and data["lossless"]["identical"]


def test_compare_json_paths_are_checked_before_any_model_loads(capsys, tmp_path):
    prompt = tmp_path / "p.txt"
    prompt.write_text("hello", encoding="utf-8")
    base = ["compare", "--print", "--target", str(tmp_path / "no-such-model"), "--draft", str(tmp_path / "no-draft")]
    code, _, err = invoke([*base, "hi", "--json", str(tmp_path / "missing" / "r.json")], capsys)
    assert_one_line(code, err, "--json", "does not exist")
    code, _, err = invoke([*base, "-f", str(prompt), "--json", str(prompt)], capsys)
    assert_one_line(code, err, "--json", "--prompt-file")
    assert prompt.read_text(encoding="utf-8") == "hello"
    same = tmp_path / "x.json"
    code, _, err = invoke([*base, "hi", "--json", str(same), "--record", str(same)], capsys)
    assert_one_line(code, err, "--json", "--record", "same file")
    assert not same.exists()
