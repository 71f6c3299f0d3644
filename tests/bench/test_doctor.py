"""`gammatune doctor`: the ranking, the tokenizer gate, a partial report after Ctrl+C, and one-line mistakes."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.bench.doctor import examine as dr
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.doctor.grid import bound_flags, policy_bounds
from gammatune_tui.bench.doctor.report import draft_ranks, recommend
from gammatune_tui.engine.policies import PolicyParams, PolicySettings
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

    def timing(pair, prompt, tokens, max_window, sampling=None):
        draft_s = 2e-3 * sum(p.numel() for p in pair.draft.parameters()) / DEMO_DRAFT_PARAMS

        def model(f):  # three passes a few per cent apart, the pool at the fastest
            return CostModel(draft_token_s=draft_s * f, verify_s={1: 8e-3 * f, 2: 9e-3 * f, 5: 10e-3 * f,
                                                                    17: 14e-3 * f}, step_s=3e-4), 8e-3 * f

        return (*model(1.0), [model(1.0), model(1.03), model(1.06)])

    monkeypatch.setattr(dr, "timing_pass", timing)


def test_with_no_arguments_the_embedded_draft_ranks_above_the_poor_ones(fixed_costs, tmp_path, capsys):
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--limit", "2", "-n", "32", "--gammas", "1,2,4", "--json", str(out),
                              "--self-drafts", "none")
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
    bounds = " ".join(bound_flags(rec["method"], rec["gamma0"]))
    assert rec["command"] == " ".join(x for x in ("gammatune chat --method", rec["method"], "--gamma",
                                                  str(rec["gamma0"]), bounds, "--temperature 0") if x)
    # every speedup comes with its spread over the three timing passes
    demo = drafts["demo draft"]
    assert demo["passes"] == 3 and demo["predicted_spread"] > 0 and demo["oracle_spread"] > 0
    assert len(demo["predicted_passes"]) == 3 and demo["predicted_spread"] == pytest.approx(
        max(abs(p - demo["predicted"]) for p in demo["predicted_passes"]))
    assert f"±{demo['predicted_spread']:.2f}" in text
    # beside the oracle, the reference rows: best fixed γ in hindsight, the perfect signal, no skipping
    refs = {name: (g, x) for name, g, x, _ in demo["references"]}
    assert set(refs) == {"best fixed γ", "perfect signal", "oracle, no skip"} and refs["best fixed γ"][0] >= 1
    assert all(x <= demo["oracle"] + 1e-9 for _, x in refs.values()) and refs["best fixed γ"][1] >= max(
        m["per_gamma"][str(g)] for m in demo["methods"] if m["method"] == "specdecode" for g in (1, 2, 4)) - 1e-9
    for label in ("best fixed γ (hindsight)", "perfect signal (bound)", "oracle, no skip (bound)"):
        assert label in text
    flat = " ".join(text.split())
    assert "Drafts ranked by predicted speedup" in flat and f"recommendation: {rec['command']}" in flat
    assert "the draft's first layer alone" in " ".join(err.split())  # what was built for the check is said


def test_a_mismatched_tokenizer_is_refused_and_the_others_go_on(tiny_pair_dirs, mismatched_draft, prompts,
                                                                tmp_path, capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--target", str(t), "--draft", str(mismatched_draft), "--draft", str(d),
                              "--prompts", str(prompts), "-n", "16", "--gammas", "1,2", "--device", "cpu", "--raw",
                              "--verify", "--json", str(out), "--self-drafts", "none")
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
                             "--device", "cpu", "--self-drafts", "none")
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
                              "--json", str(out), "--self-drafts", "none")
    assert code == 130
    data = _strict_json(out)
    assert data["complete"] is False
    assert [x["status"] for x in data["drafts"]] == ["examined", "interrupted"]
    assert data["ranking"] == [str(d)]
    # the CLI's one line, in the words run and bench use
    assert err.strip().splitlines()[-1] == f"gammatune: interrupted — a partial report (1 of 2 drafts examined); {out} holds it"
    assert "Drafts ranked" in text  # what was examined is printed too


@pytest.mark.parametrize("argv,needle", [
    (["--draft", "x"], "--draft needs --target"),
    (["--target", "x", "--self-drafts", "none"], "at least one --draft"),
    (["--self-drafts", "self:int5"], "unknown self-draft"),
    (["--target", "t", "--draft", "x", "--draft", "x"], "given twice"),
    (["--gammas", "1,,2"], "--gammas"),
    (["--device", "tpu"], "device"),
    (["--prompts", "/nonexistent/p.jsonl"], "no such prompt file"),
    (["--limit", "0"], "--limit"),
    (["--temperature", "-1"], "temperature"),
    (["--top-p", "0.9"], "--temperature above 0"),
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


def _report(label, predicted, spread, method="specdecode", gamma=2):
    return dr.DraftReport(label, label, predicted=predicted, predicted_spread=spread, best_method=method,
                          best_gamma=gamma, oracle=predicted + 0.2)


def test_drafts_rank_apart_only_where_the_gap_exceeds_the_timing_spread():
    reports = [_report("a", 1.40, 0.05), _report("b", 1.37, 0.05), _report("c", 1.10, 0.01)]
    assert draft_ranks(reports) == {"a": "1=", "b": "1=", "c": "3"}
    assert draft_ranks([_report("a", 1.40, 0.0), _report("b", 1.37, 0.0)]) == {"a": "1", "b": "2"}


def test_a_verdict_holds_over_the_whole_spread():
    assert _report("a", 1.30, 0.05).verdict == "worth it"
    assert _report("a", 1.08, 0.05).verdict.startswith("marginal: within the timing spread")
    assert _report("a", 0.98, 0.05).verdict.startswith("marginal")
    assert _report("a", 0.90, 0.05).verdict.startswith("not worth it")
    # and a prediction within the spread of the target alone is not recommended
    cand = [dr.Candidate("a", "a", ())]
    assert recommend([_report("a", 1.02, 0.05)], cand).command == ""
    assert recommend([_report("a", 1.30, 0.05)], cand).command


def test_doctor_never_recommends_a_gamma_the_policy_would_override():
    """γ0 below γ_min: the bounds come with it, and the policy then keeps it (as the doctor simulated it)."""
    d = PolicyParams()
    low, high = d.gamma_min - 1, d.gamma_max + 2
    assert policy_bounds("specdecode", 1) == {}  # no bounds to override a fixed window
    for method in ("gammatune", "gammatune+", "adaptive-k"):
        assert policy_bounds(method, d.gamma_min) == {}
        if low >= 1:
            cmd = recommend([_report("a", 1.3, 0.0, method, low)], [dr.Candidate("a", "a", ())]).command
            assert f"--gamma {low} --gamma-min {low}" in cmd
            kept = PolicySettings.build(method, low, **policy_bounds(method, low)).make()
            kept.update(accepted=0, drafted=low)
            assert kept.params.gamma_min == low
            if method != "adaptive-k":  # (adaptive-k plans its window from costs; its floor is what matters)
                assert kept.gamma == low
                # bounds left at their defaults follow γ0 as well (issue 17 row 9): nothing overrides it
                plain = PolicySettings.build(method, low).make()
                plain.update(accepted=0, drafted=low)
                assert plain.params.gamma_min == low and plain.gamma == low
        b = policy_bounds(method, high)
        assert b == {"gamma_max": high}
        p = PolicySettings.build(method, high, **b).make()
        assert p.gamma == high and p.params.gamma_max == high


def test_doctor_at_a_temperature_simulates_sampled_decoding_and_recommends_it(fixed_costs, tiny_pair_dirs, prompts,
                                                                             tmp_path, capsys, monkeypatch):
    from gammatune_tui.bench.doctor import run as doctor_run

    seen = []
    real = doctor_run.dr.record_sampled_trace
    monkeypatch.setattr(dr, "record_sampled_trace", lambda *a, **k: seen.append(a[6]) or real(*a, **k))
    t, d = tiny_pair_dirs
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--target", str(t), "--draft", str(d), "--prompts", str(prompts), "-n", "16",
                              "--gammas", "1,2", "--device", "cpu", "--raw", "-t", "0.7", "--top-p", "0.9",
                              "--json", str(out), "--self-drafts", "none")
    assert code == 0, err
    assert len(seen) == 2 and seen[0].temperature == 0.7 and seen[0].top_p == 0.9  # one sampled trace per prompt
    data = _strict_json(out)
    assert data["config"]["greedy"] is False and data["config"]["sampling"]["top_p"] == 0.9
    assert "sampled, T = 0.7, top-p 0.9, simulated" in " ".join(text.split())
    cmd = data["recommendation"]["command"]
    if cmd:  # the advice serves tokens as they were simulated
        assert cmd.endswith("--temperature 0.7 --top-p 0.9")


def test_self_drafts_are_candidates_by_default_with_their_precision(tiny_pair_dirs, prompts, tmp_path, capsys):
    """Issue 26: beside the given draft, the target's own int4 and int8 copies, each with c, α and a verdict."""
    t, d = tiny_pair_dirs
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--target", str(t), "--draft", str(d), "--prompts", str(prompts), "-n", "12",
                              "--gammas", "1,2", "--device", "cpu", "--raw", "--json", str(out))
    assert code == 0, err
    data = _strict_json(out)
    drafts = {x["label"]: x for x in data["drafts"]}
    assert set(drafts) == {str(d), "self:int4", "self:int8"}
    for name, precision in (("self:int4", "int4 g32"), ("self:int8", "int8")):
        x = drafts[name]
        assert x["status"] == "examined" and x["precision"] == precision and x["weight_bytes"] > 0
        assert 0 < x["agreement"] <= 1 and x["c"] > 0 and x["verdict"]   # a random tiny net: α means little
    assert "int4 g32 +" in text   # the ranking's size column: precision and the bytes it adds


def test_a_self_draft_that_cannot_be_built_is_skipped_and_the_others_examined(tiny_pair_dirs, prompts, tmp_path,
                                                                               capsys):
    """Issue 40 row 10: one self-draft the target cannot have (self:bf16 of a bfloat16 target) used to stop the
    whole doctor; it is now refused in its row, with its reason, and the next draft is examined."""
    t, _ = tiny_pair_dirs
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, "--target", str(t), "--self-drafts", "self:bf16,self:int8", "--prompts", str(prompts),
                              "-n", "8", "--gammas", "1,2", "--device", "cpu", "--dtype", "bfloat16", "--raw",
                              "--json", str(out))
    assert code == 0, err
    refused, examined = _strict_json(out)["drafts"]
    assert refused["label"] == "self:bf16" and refused["status"] == "refused"
    assert "would be the target itself" in refused["reason"]
    assert examined["label"] == "self:int8" and examined["status"] == "examined"
    assert "refused: --draft self:bf16 would be the target itself" in " ".join(text.split())
