"""`gammatune doctor`: the ranking, the tokenizer gate, a partial report after Ctrl+C, and one-line mistakes."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.bench import doctor as dr
from gammatune_tui.bench.cost_model import CostModel
from gammatune_tui.cli import main
from gammatune_tui.engine.policies import METHODS

from tiny_models import make_llama, make_word_tokenizer

DEMO_DRAFT_PARAMS = 950_912


def _doctor(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(["doctor", *argv])
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


def _strict_json(path):
    def no_constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constant)


@pytest.fixture
def prompts(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"id": "a", "turns": ["def add(a, b):"]}\n{"id": "b", "turns": ["class Stack:"]}\n')
    return path


@pytest.fixture
def mismatched_draft(tmp_path):
    """A draft whose tokenizer is not the target's: eight words instead of 259 bytes."""
    tok = make_word_tokenizer(list("abcdefgh"))
    model = make_llama(len(tok), seed=5, eos=None, bos=None)
    d = tmp_path / "other-tokenizer"
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.fixture
def fixed_costs(monkeypatch):
    """The timing pass replaced by prices that grow with the draft's size: the ranking no longer waits on the clock."""

    def timing(pair, prompt, tokens, max_window):
        draft_s = 2e-3 * sum(p.numel() for p in pair.draft.parameters()) / DEMO_DRAFT_PARAMS
        return CostModel(draft_token_s=draft_s, verify_s={1: 8e-3, 2: 9e-3, 5: 10e-3, 17: 14e-3}, step_s=3e-4), 8e-3

    monkeypatch.setattr(dr, "timing_pass", timing)


def test_with_no_arguments_the_embedded_draft_ranks_above_the_poor_ones(fixed_costs, tmp_path, capsys):
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--limit", "2", "-n", "32", "--gammas", "1,2,4", "--json", str(out))
    assert code == 0, err
    data = _strict_json(out)
    assert data["complete"] and data["ranking"][0] == "demo draft"
    assert data["ranking"][-1] == "random weights, one layer"
    drafts = {d["label"]: d for d in data["drafts"]}
    assert drafts["demo draft"]["verdict"] == "worth it" and drafts["demo draft"]["agreement"] > 0.5
    assert drafts["random weights, one layer"]["verdict"].startswith("not worth it")
    assert drafts["random weights, one layer"]["agreement"] < 0.1
    for d in drafts.values():  # every method at its best γ0 never beats the oracle on the same traces and costs
        assert all(m["best"] <= d["oracle"] + 1e-9 for m in d["methods"]) and len(d["methods"]) == len(METHODS)
    rec = data["recommendation"]
    assert rec["label"] == "demo draft"
    assert rec["command"] == f"gammatune chat --method {rec['method']} --gamma {rec['gamma0']} --temperature 0"
    flat = " ".join(text.split())
    assert "Drafts ranked by predicted speedup" in flat and f"recommendation: {rec['command']}" in flat
    assert "the draft's first layer alone" in " ".join(err.split())  # what was built for the check is said


def test_a_mismatched_tokenizer_is_refused_and_the_others_go_on(tiny_pair_dirs, mismatched_draft, prompts,
                                                                tmp_path, capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--target", str(t), "--draft", str(mismatched_draft), "--draft", str(d),
                              "--prompts", str(prompts), "-n", "16", "--gammas", "1,2", "--device", "cpu", "--raw",
                              "--verify", "--json", str(out))
    assert code == 0, err
    data = _strict_json(out)
    refused, examined = data["drafts"]
    assert refused["status"] == "refused" and "tokenizers differ" in refused["reason"]
    assert examined["status"] == "examined" and examined["prompts"] == 2 and examined["tokens"] == 32
    assert data["ranking"] == [str(d)]
    flat = " ".join(text.split())
    assert "refused: draft and target tokenizers differ" in flat
    if data["recommendation"]["command"]:  # the live check ran the advice beside the target alone
        assert "--verify" in flat and data["verify"]["rows"] and all(r["same_text"] for r in data["verify"]["rows"])
        assert "--target" in data["recommendation"]["command"] and "--device cpu" in data["recommendation"]["command"]


def test_every_draft_refused_is_one_line_and_exit_2(tiny_pair_dirs, mismatched_draft, prompts, capsys):
    t, _ = tiny_pair_dirs
    code, out, err = _doctor(capsys, "--target", str(t), "--draft", str(mismatched_draft), "--prompts", str(prompts),
                             "--device", "cpu")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gammatune: error: no candidate draft can be used")
    assert "tokenizers differ" in lines[0]


def test_ctrl_c_leaves_a_partial_valid_report(tiny_pair_dirs, prompts, tmp_path, capsys, monkeypatch):
    t, d = tiny_pair_dirs
    real = dr.record
    calls = []

    def interrupted_on_the_second_draft(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(dr, "record", interrupted_on_the_second_draft)
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--target", str(t), "--draft", str(d), "--draft", str(t),
                              "--prompts", str(prompts), "-n", "12", "--gammas", "1,2", "--device", "cpu", "--raw",
                              "--json", str(out))
    assert code == 130
    data = _strict_json(out)
    assert data["complete"] is False
    assert [x["status"] for x in data["drafts"]] == ["examined", "interrupted"]
    assert data["ranking"] == [str(d)]
    assert "interrupted: a partial report (1 of 2 drafts examined)" in " ".join(err.split())
    assert "Drafts ranked" in text  # what was examined is printed too


@pytest.mark.parametrize("argv,needle", [
    (["--draft", "x"], "--draft needs --target"),
    (["--target", "x"], "at least one --draft"),
    (["--target", "t", "--draft", "x", "--draft", "x"], "given twice"),
    (["--gammas", "1,,2"], "--gammas"),
    (["--device", "tpu"], "device"),
    (["--prompts", "/nonexistent/p.jsonl"], "no such prompt file"),
    (["--limit", "0"], "--limit"),
    (["--target", "/nonexistent/target", "--draft", "/nonexistent/draft"], "target model"),
])
def test_mistakes_are_one_line_and_exit_2(capsys, tmp_path, argv, needle):
    code, out, err = _doctor(capsys, *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gammatune: error:") and needle in lines[0]
    assert "Traceback" not in err and out == ""


def test_json_pointing_at_a_directory_is_refused_before_any_model_loads(capsys, tmp_path):
    code, out, err = _doctor(capsys, "--json", str(tmp_path))
    assert code == 2 and "is a directory" in err and out == ""


def test_an_unwritable_json_path_is_one_line_before_any_draft_is_examined(tiny_pair_dirs, prompts, tmp_path, capsys):
    t, d = tiny_pair_dirs
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = _doctor(capsys, "--target", str(t), "--draft", str(d), "--prompts", str(prompts),
                             "--device", "cpu", "--json", str(blocker / "doctor.json"))
    assert code == 2 and "cannot write" in err and len(err.strip().splitlines()) == 1 and out == ""
