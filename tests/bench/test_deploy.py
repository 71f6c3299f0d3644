"""`doctor --for` and `--server-log`: each engine's own rule, its command's flags, and a server's log read back."""

from __future__ import annotations

import json
import math
import os
import re
import shlex

import pytest

from gammatune_tui.bench.deploy import llamacpp
from gammatune_tui.bench.deploy.engines import ENGINES, FLAGS, parse_engines
from gammatune_tui.bench.deploy.rank import given_prices, play_row
from gammatune_tui.bench.deploy.server_log import ServerLogError, predictions, read
from gammatune_tui.bench.doctor import examine as dr
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.simulate import Trace, play_trace
from gammatune_tui.cli import main
from gammatune_tui.engine.policies import PolicySettings

# Every flag / config key a printed command may use, copied from the sources docs/deploy.md cites:
CITED = {
    # vLLM docs/features/speculative_decoding/draft_model.md (commit 497fb83): --speculative_config '{"model": …,
    # "num_speculative_tokens": 5, "method": "draft_model"}' (argparse takes - and _ alike)
    "vllm": {"--speculative-config", "model", "num_speculative_tokens", "method"},
    # SGLang docs/advanced_features/speculative_decoding.md (fc6d465), server_arguments.md (b36e8e1)
    "sglang": {"--model-path", "--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-steps",
               "--speculative-eagle-topk", "--speculative-num-draft-tokens"},
    # llama.cpp tools/server/README.md (00dc805): -m, --spec-draft-model/-md, --spec-draft-n-max, -n-min, -p-min
    "llama.cpp": {"-m", "-md", "--spec-draft-n-max", "--spec-draft-n-min", "--spec-draft-p-min"},
    # transformers 5.24.0 generation/configuration_utils.py (GenerationConfig) and generate()'s assistant_model
    "transformers": {"num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold",
                     "assistant_model"},
}


def _trace() -> Trace:
    """Six tokens (the last is EOS); the draft misses at position 2 with top probability 0.3."""
    return Trace(prompt_id="p", prompt_ids=[3], tokens=[5, 6, 7, 8, 9, 1], draft_ids=[5, 6, 0, 8, 9, 1],
                 draft_prob=[0.9, 0.8, 0.3, 0.9, 0.6, 0.9], off_ids={2: [3, 4, 5]}, off_prob={2: [0.9, 0.2, 0.9]},
                 off_depth=3, eos_ids=[1], max_new_tokens=6)


FLAT = CostModel(draft_token_s=1.0, verify_s={1: 10.0})


def test_llama_cpp_drops_the_unsure_token_and_pays_its_forward():
    rec = llamacpp.play(_trace(), n_max=4, n_min=0, p_min=0.5, cost=FLAT)
    # step 1 drafts 5, 6 and stops before the 0.3 token (dropped, its forward paid); step 2 drafts 8, 9
    assert (rec.steps, rec.drafted, rec.accepted, rec.tokens) == (2, 4, 4, 6)
    assert rec.draft_s == pytest.approx(5.0) and rec.wall_s == pytest.approx(25.0)
    house = play_trace(_trace(), PolicySettings.build("p-min", 4, p_min=0.5).make(), None, FLAT)
    assert house.drafted == 5   # gammatune's p-min keeps the token that ended the window: one more to verify


def test_llama_cpp_throws_away_a_draft_shorter_than_n_min():
    rec = llamacpp.play(_trace(), n_max=4, n_min=3, p_min=0.5, cost=FLAT)
    assert (rec.steps, rec.drafted, rec.accepted, rec.tokens) == (6, 0, 0, 6)   # every draft too short: plain steps
    assert rec.draft_s == pytest.approx(9.0)   # 3 + 2 + 1 + 2 + 1 forwards run for nothing


def test_llama_cpp_with_p_min_zero_is_a_fixed_window():
    for k in (1, 2, 4):
        a = llamacpp.play(_trace(), n_max=k, n_min=0, p_min=0.0, cost=FLAT)
        b = play_trace(_trace(), PolicySettings.build("specdecode", k).make(), None, FLAT)
        assert (a.steps, a.drafted, a.accepted, a.tokens, a.wall_s) == (b.steps, b.drafted, b.accepted, b.tokens,
                                                                         b.wall_s)


def _flags(engine: str, command: str) -> set[str]:
    if engine == "transformers":
        return set(re.findall(r"(\w+)=", command.split("#")[0])) - {"inputs"}
    words = shlex.split(command)
    if engine == "sglang":   # `python -m` is Python's own flag
        assert words[:3] == ["python", "-m", "sglang.launch_server"]
        words = words[3:]
    out = {w for w in words if w.startswith("-")}
    if engine == "vllm":
        out |= set(json.loads(words[words.index("--speculative-config") + 1]))
    return out


def test_every_printed_flag_is_one_the_cited_sources_name():
    for e in ENGINES:
        assert set(FLAGS[e.name]) <= CITED[e.name]
        for s in e.grid([1, 3, 8]):
            used = _flags(e.name, e.command("org/Target-7B", "org/Draft-1B", s))
            assert used <= CITED[e.name], (e.name, used - CITED[e.name])
            assert used <= set(FLAGS[e.name])


def test_engine_names_parse_and_a_typo_is_refused():
    assert [e.name for e in parse_engines("vllm,llamacpp,HF")] == ["vllm", "llama.cpp", "transformers"]
    assert len(parse_engines("all")) == 4
    with pytest.raises(ValueError, match="unknown engine 'vlm'"):
        parse_engines("vlm")


# --- the doctor end to end ----------------------------------------------------------------------------------
@pytest.fixture
def fixed_costs(monkeypatch):
    def timing(pair, prompt, tokens, max_window, sampling=None):
        def model(f):
            return CostModel(draft_token_s=1e-3 * f, verify_s={1: 8e-3 * f, 2: 9e-3 * f, 5: 10e-3 * f,
                                                              17: 14e-3 * f}, step_s=3e-4), 8e-3 * f
        return (*model(1.0), [model(1.0), model(1.03), model(1.06)])

    monkeypatch.setattr(dr, "timing_pass", timing)


@pytest.fixture
def prompts(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"id": "a", "turns": ["def add(a, b):"]}\n{"id": "b", "turns": ["class Stack:"]}\n')
    return path


def _doctor(capsys, tiny_pair_dirs, prompts, *argv):
    t, d = tiny_pair_dirs
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--target", str(t), "--draft", str(d), "--prompts", str(prompts), "-n", "24", "--gammas",
              "1,2,3,4", "--device", "cpu", "--raw", "--self-drafts", "none", *argv])
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


def test_for_every_engine_prints_its_best_setting_as_a_command(fixed_costs, tiny_pair_dirs, prompts, tmp_path,
                                                                 capsys):
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, tiny_pair_dirs, prompts, "--for", "all", "--json", str(out))
    assert code == 0, err
    data = json.loads(out.read_text())
    deploy = data["deploy"]
    engines = {e["engine"]: e for e in deploy["engines"]}
    assert list(engines) == ["vllm", "sglang", "llama.cpp", "transformers"]
    flat = " ".join(text.split())
    for e in engines.values():
        assert " ".join(e["command"].split()) in flat and e["best"]["speedup"] > 0
        assert e["rank"][0]["speedup"] == e["best"]["speedup"]
    # vLLM's fixed K is specdecode at K: its best is the doctor's own best specdecode γ0, priced alike
    draft = data["drafts"][0]
    spec = next(m for m in draft["methods"] if m["method"] == "specdecode")
    assert engines["vllm"]["best"]["speedup"] == pytest.approx(spec["best"])
    assert engines["vllm"]["best"]["knobs"] == {"num_speculative_tokens": spec["best_gamma"]}
    # each richer grid holds the fixed window, and gammatune's own best holds every engine's rule it plays
    for name in ("llama.cpp", "transformers"):
        assert engines[name]["best"]["speedup"] >= engines["vllm"]["best"]["speedup"] - 1e-9
    assert deploy["gammatune"]["speedup"] >= engines["vllm"]["best"]["speedup"] - 1e-9
    assert engines["llama.cpp"]["default"]["knobs"] == {"n_max": 3, "n_min": 0, "p_min": 0.0}
    assert "batch 1" in flat and "--costs" in flat and "p-min defaults to 0.00" in flat


def test_costs_price_the_engines_with_the_servers_numbers(fixed_costs, tiny_pair_dirs, prompts, tmp_path, capsys):
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, tiny_pair_dirs, prompts, "--for", "vllm", "--costs", "1,20", "--json", str(out))
    assert code == 0, err
    deploy = json.loads(out.read_text())["deploy"]
    assert deploy["costs"] == {"given": True, "draft_ms": 1.0, "verify_ms": {"1": 20.0},
                               "target_alone_ms_per_token": 20.0}
    best = deploy["engines"][0]["best"]
    assert best["spread"] == 0 and best["speedup"] > 1   # the user's prices: no timing passes to spread over
    assert "the costs you gave" in " ".join(text.split())


def test_given_costs_price_a_step_as_its_drafts_and_one_target_forward():
    vllm = parse_engines("vllm")[0]
    k2 = next(s for s in vllm.grid([1, 2]) if s.knobs["num_speculative_tokens"] == 2)
    row = play_row(k2, [_trace()], given_prices([_trace()], 1.0, 10.0), None)
    # two steps of two accepted drafts: 4 drafted tokens (4 ms) and two 10 ms passes, against 6 tokens × 10 ms
    assert row.speedup == pytest.approx(60 / 24) and row.spread == 0
    assert row.mean_acceptance_length == pytest.approx(3.0)


@pytest.mark.parametrize("argv, needle", [
    (["--for", "vlm"], "--for: unknown engine 'vlm'"),
    (["--for", "vllm", "--costs", "2"], "--costs '2': give two positive numbers"),
    (["--costs", "2,18"], "--costs prices the --for and --server-log predictions"),
])
def test_deploy_mistakes_are_one_line_and_exit_2(capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        main(["doctor", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and needle in err and len(err.strip().splitlines()) == 1


# --- a server's log -----------------------------------------------------------------------------------------
# vLLM docs/features/speculative_decoding/acceptance_metrics.md: the `summary` example, verbatim numbers
VLLM_SUMMARY = {"choices": [], "usage": {}, "metrics": {"speculative_decoding": {
    "mean_acceptance_length": 1.2325581395348837, "draft_acceptance_rate": 0.07751937984496124,
    "acceptance_histogram": [39, 1, 0, 3], "num_spec_steps": 43, "num_accepted_draft_tokens": 10,
    "num_draft_tokens": 129, "num_spec_tokens": 3}}}
# llama.cpp common/speculative.cpp, common_speculative_print_stats (written here from its format string)
LLAMA_LINE = ("spec common_specu: statistics     draft-simple: #calls(b,g,a) =    1     50     48, #gen drafts =     48, "
              "#acc drafts =    40, #gen tokens =    144, #acc tokens =    90, #mean acc len = 2.88, "
              "#acc rate/pos = (0.833, 0.625, 0.417), dur(b,g,a) = 0.010, 12.000, 0.100 ms")


def test_a_vllm_summary_reads_back_with_vllms_own_definitions(tmp_path):
    f = tmp_path / "resp.json"
    f.write_text(json.dumps(VLLM_SUMMARY))
    log = read(f)
    assert (log.engine, log.k, log.steps) == ("vLLM", 3, 43)
    assert log.mean_acceptance_length == VLLM_SUMMARY["metrics"]["speculative_decoding"]["mean_acceptance_length"]
    assert log.draft_acceptance_rate == pytest.approx(0.07751937984496124)
    assert log.survival == pytest.approx([4 / 43, 3 / 43, 3 / 43])
    # K' = 1: a step accepts min(a, 1); it drafts one token (1 ms) and verifies two in one 10 ms pass
    p = predictions(log, FLAT)
    assert p[0].tokens_per_step == pytest.approx(1 + 4 / 43)
    assert p[0].speedup == pytest.approx((1 + 4 / 43) * 10 / 11)
    assert p[2].tokens_per_step == pytest.approx(log.mean_acceptance_length)


def test_the_older_per_choice_form_and_the_detailed_arrays_read_too(tmp_path):
    old = {"choices": [{"index": 0, "speculative_decoding_stats": {
        "mean_acceptance_length": 2.0, "draft_acceptance_rate": 0.5, "acceptance_histogram": {"0": 1, "2": 1},
        "num_spec_steps": 2, "num_accepted_draft_tokens": 2, "num_draft_tokens": 4, "num_spec_tokens": 2,
        "per_step_accepted": [0, 2], "per_step_drafted": [2, 2]}}]}
    f = tmp_path / "old.jsonl"
    f.write_text(json.dumps(old) + "\n" + json.dumps(old) + "\n")
    log = read(f)
    assert (log.requests, log.steps, log.accepted, log.per_step) == (2, 4, 4, [(0, 2), (2, 2)] * 2)
    p = predictions(log, FLAT)   # K' = 1 from the steps themselves: accepts 0, 1, 0, 1; drafts 1 each
    assert p[0].tokens_per_step == pytest.approx(1.5) and p[0].speedup == pytest.approx(1.5 * 10 / 11)


def test_a_llama_cpp_statistics_line_reads_back(tmp_path):
    f = tmp_path / "server.log"
    f.write_text("main: server is listening\n" + LLAMA_LINE + "\n")
    log = read(f)
    assert (log.engine, log.k, log.steps, log.accepted, log.drafted) == ("llama.cpp", 3, 48, 90, 144)
    assert round(log.mean_acceptance_length, 2) == 2.88 and log.survival == [0.833, 0.625, 0.417]


@pytest.mark.parametrize("content", ["hello\n", '{"choices": [{"text": "no stats"}]}',
                                     '{"metrics": {"speculative_decoding": {"num_spec_steps": 2, '
                                     '"num_accepted_draft_tokens": -1, "num_draft_tokens": 4, "num_spec_tokens": 2}}}'])
def test_a_foreign_or_bad_log_is_one_line_and_exit_2(tmp_path, capsys, content):
    f = tmp_path / "x.log"
    f.write_text(content)
    with pytest.raises(ServerLogError):
        read(f)
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--server-log", str(f)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--server-log" in err and len(err.strip().splitlines()) == 1


def test_server_log_sets_the_servers_acceptance_beside_ours_and_names_the_best_window(
        fixed_costs, tiny_pair_dirs, prompts, tmp_path, capsys):
    f = tmp_path / "resp.json"
    f.write_text(json.dumps(VLLM_SUMMARY))
    out = tmp_path / "doctor.json"
    code, text, err = _doctor(capsys, tiny_pair_dirs, prompts, "--server-log", str(f), "--costs", "1,10",
                              "--json", str(out))
    assert code == 0, err
    srv = json.loads(out.read_text())["server_log"]
    assert srv["server"]["mean_acceptance_length"] == pytest.approx(1.2325581395348837)
    assert 1 <= srv["gammatune"]["mean_acceptance_length"] <= 4 and srv["k"] == 3
    speeds = [w["speedup"] for w in srv["windows"]]
    assert srv["best_k"] == 1 + speeds.index(max(speeds)) and srv["best_k"] == 1   # 10 % acceptance: K′ = 1
    assert not srv["server_k_is_best"]
    flat = " ".join(text.split())
    assert "is not the best: num_speculative_tokens 1" in flat and "Acceptance in the server's terms" in flat


def test_bench_simulate_for_plays_the_engines_over_its_traces(tiny_pair_dirs, prompts, tmp_path, capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "bench.json"
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--simulate", "--target", str(t), "--draft", str(d), "--prompts", str(prompts), "-n", "16",
              "--gammas", "1,2", "--methods", "specdecode,gammatune", "--for", "vllm,llama.cpp", "--check-live", "0",
              "--traces", str(tmp_path / "traces.json"), "--out", str(out), "--raw", "--device", "cpu"])
    text = capsys.readouterr().out
    assert exc.value.code in (0, None)
    data = json.loads(out.read_text())
    engines = {e["engine"]: e for e in data["deploy"]["engines"]}
    assert set(engines) == {"vllm", "llama.cpp"} and "What each engine can run" in text
    # vLLM at K is the sweep's own specdecode cell at γ0 = K: the same traces and prices
    cell = next(c for c in data["sim"]["cells"] if c["method"] == "specdecode"
                and c["gamma0"] == engines["vllm"]["best"]["knobs"]["num_speculative_tokens"])
    assert engines["vllm"]["best"]["mean_acceptance_length"] == pytest.approx(
        cell["speculative_decoding"]["mean_acceptance_length"])


def test_bench_for_needs_simulate(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--for", "vllm"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--for plays the engines over the traces: use it with --simulate" in err


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("GAMMATUNE_TIMED_TESTS") != "1",
                    reason="compares timings: run with GAMMATUNE_TIMED_TESTS=1 on a quiet machine (a CI runner's "
                           "neighbours move both sides of the comparison)")
def test_the_best_fixed_k_prediction_agrees_with_a_live_run_at_that_k(tmp_path, capsys):
    """The goal at small size, on the demo pair: --for's best vLLM K, predicted from the trace and this machine's
    timing passes, against `compare` run live at that K on the same prompt and budget (three interleaved rounds):
    the predicted interval (± its timing spread) reaches compare's lowest–highest round."""
    from gammatune_tui import resources
    from gammatune_tui.prompts import load_prompt_set

    root = resources.require_demo_pair()
    t, d = root / "target", root / "draft"
    text = load_prompt_set("code")[0].text
    prompts = tmp_path / "one.jsonl"
    prompts.write_text(json.dumps({"id": "code-0", "turns": [text]}) + "\n")
    out, n = tmp_path / "doctor.json", 32
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--target", str(t), "--draft", str(d), "--prompts", str(prompts), "-n", str(n),
              "--gammas", "1,2,3,4,6", "--self-drafts", "none", "--threads", "1", "--for", "vllm", "--json", str(out)])
    assert exc.value.code == 0, capsys.readouterr().err
    best = json.loads(out.read_text())["deploy"]["engines"][0]["best"]
    k = best["knobs"]["num_speculative_tokens"]
    race = tmp_path / "race.json"
    with pytest.raises(SystemExit) as exc:   # the text as the argument: a --prompt-file drops its final newline
        main(["compare", "--print", text, "--target", str(t), "--draft", str(d), "-M",
              "specdecode,gammatune+", "--gamma", str(k), "-n", str(n), "--repeats", "3", "-t", "0", "--threads", "1",
              "--json", str(race)])
    assert exc.value.code == 0, capsys.readouterr().err
    spec = next(c for c in json.loads(race.read_text())["contestants"] if c["label"] == "specdecode")
    live = spec["speedup_over_target_only"]
    lo, hi = best["speedup"] - best["spread"], best["speedup"] + best["spread"]
    assert live["low"] <= hi and live["high"] >= lo, (best, live)


def test_a_server_window_longer_than_the_traces_says_so_instead_of_failing(tmp_path):
    from gammatune_tui.bench.deploy.server_view import render, view

    stats = dict(VLLM_SUMMARY["metrics"]["speculative_decoding"], num_spec_tokens=8,
                 acceptance_histogram=[39, 1, 0, 3, 0, 0, 0, 0, 0])
    f = tmp_path / "resp.json"
    f.write_text(json.dumps(stats))
    toks = list(range(10, 30))
    long = Trace(prompt_id="p", prompt_ids=[3], tokens=toks, draft_ids=toks[:2] + [0] + toks[3:], draft_prob=[0.9] * 20,
                 off_ids={2: [4, 5, 6]}, off_prob={2: [0.9] * 3}, off_depth=3, eos_ids=[1], max_new_tokens=20)
    v = view(read(f), "resp.json", "d", [long], given_prices([long], 1.0, 10.0), None)
    assert math.isnan(v.ours_length) and [w.k for w in v.windows] == [1, 2, 3, 8]   # runs seen reach 3
    from rich.console import Console

    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    console.print(render(v))
    assert "give --gammas up to 8" in console.export_text()
