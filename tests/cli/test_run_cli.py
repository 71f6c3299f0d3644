"""`gammatune run` and `gammatune models`: output, --json, --record, and one-line errors (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent, event_from_json
from gammatune_tui.render.safe_text import printable
from gammatune_tui.session.recording import read_recording
from clihelpers import invoke

REPO = Path(__file__).resolve().parents[2]


def test_run_piped_puts_only_the_text_on_stdout(capsys, pair_args):
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "12", "--method", "gammatune", "--raw",
                             "-t", "0"], capsys)
    assert code == 0, err
    text = out[:-1] if out.endswith("\n") else out
    code2, out2, _ = invoke(["run", "def f(x):", *pair_args, "-n", "12", "--method", "gammatune", "--raw", "-t", "0",
                             "--json"], capsys)
    summary = json.loads(out2.splitlines()[-1])
    assert text == printable(summary["text"])           # stdout: the generated text, nothing else
    assert "def f(x):" not in out and "run summary" not in out
    assert "run summary" in err and "tokens/s" in err and "max_new_tokens" in err and "gammatune γ0=4" in err
    assert "colours:" not in err + out                   # no colour, so no colour legend
    assert "\x1b" not in out + err


def test_run_on_a_terminal_shows_header_text_summary_and_legend_on_stdout(capsys, pair_args, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "8", "--raw"], capsys)
    assert code == 0, err
    assert "def f(x):" in out and "run summary" in out and "colours:" in out and "\x1b[" in out
    assert err == ""


def test_run_with_no_color_has_no_legend(capsys, pair_args, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "8", "--raw"], capsys)
    assert code == 0, err
    assert "run summary" in out and "colours:" not in out


@pytest.mark.parametrize("extra, needle", [
    (["-n", "1000000000000"], "--max-new-tokens 1,000,000,000,000 does not fit in the 1,024-token context"),
    (["-n", "1015"], "at most 1,014 new tokens fit"),
])
def test_run_refuses_a_budget_past_the_context_at_once(capsys, pair_args, extra, needle):
    code, out, err = invoke(["run", "abcdefghi", *pair_args, "--raw", *extra], capsys)   # 10 tokens with BOS
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith("gammatune: error:") and needle in lines[0]
    assert "max_position_embeddings" in lines[0]


def test_run_refuses_a_prompt_longer_than_the_context(capsys, pair_args):
    code, out, err = invoke(["run", "x" * 2000, *pair_args, "--raw", "-n", "4"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "the prompt is 2,001 tokens" in lines[0] and "shorten it" in lines[0]


def test_run_help_says_which_demo_prompt_and_shows_no_bool_after_flags(capsys):
    code, out, _ = invoke(["run", "--help"], capsys)
    assert code == 0
    flat = " ".join(out.replace("│", " ").split())
    assert "the demo prompt --seed picks" in flat and "random" not in flat
    assert "<bool>" not in out
    raw_line = next(line for line in out.splitlines() if "--raw" in line)
    assert "bool" not in raw_line


def test_run_without_prompt_picks_the_demo_prompt_by_seed(capsys, pair_args):
    picked = []
    for seed in ("0", "0", "5"):
        code, out, err = invoke(["run", *pair_args, "-n", "2", "--json", "--seed", seed], capsys)
        assert code == 0, err
        picked.append(json.loads(out.splitlines()[0])["user_text"])
    assert picked[0] == picked[1]
    from gammatune_tui.prompts import seeded_demo_prompt
    assert picked[2] == seeded_demo_prompt(5).text


def test_run_json_is_exactly_the_event_stream(capsys, pair_args, tmp_path):
    rec = tmp_path / "run.jsonl"
    code, out, err = invoke(["run", "def f(x):", *pair_args, "-n", "10", "--json", "--record", str(rec),
                             "-t", "0.8", "--seed", "3"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    events = [event_from_json(json.loads(line)) for line in lines]
    assert isinstance(events[0], SessionHeader) and isinstance(events[-1], SessionSummary)
    assert all(isinstance(e, StepEvent) for e in events[1:-1])
    assert events[-1].tokens == 10 and events[0].sampling["temperature"] == 0.8
    recorded = rec.read_text(encoding="utf-8").splitlines()   # the same lines; the summary's derived
    assert recorded[:-1] == lines[:-1]                           # vLLM-terms object is --json's alone
    assert json.loads(recorded[-1]) == {k: v for k, v in json.loads(lines[-1]).items() if k != "speculative_decoding"}
    recording = read_recording(rec)
    assert len(recording.events) == len(events)


def test_run_without_prompt_names_the_demo_prompt(capsys, pair_args):
    code, out, err = invoke(["run", *pair_args, "-n", "3", "--json"], capsys)
    assert code == 0, err
    assert "demo prompt" in err and "picked by --seed 0" in err and len(err.strip().splitlines()) == 1
    header = json.loads(out.splitlines()[0])
    assert header["user_text"] and header["type"] == "header"


def test_run_escapes_control_characters(capsys, pair_args, monkeypatch):
    from gammatune_tui.engine import decoder as decoder_mod
    from gammatune_tui.engine.events import EmittedToken

    real = decoder_mod.SpeculativeDecoder.generate

    def hostile(self, prompt, max_new_tokens=128, **kw):
        for ev in real(self, prompt, max_new_tokens, **kw):
            if isinstance(ev, StepEvent) and ev.step == 0:
                ev = StepEvent(**{**ev.__dict__, "emitted": [EmittedToken(5, "\x1b[2J[bold]x[/]\r", "target")]})
            yield ev

    monkeypatch.setattr(decoder_mod.SpeculativeDecoder, "generate", hostile)
    code, out, err = invoke(["run", "hi", *pair_args, "-n", "3"], capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out
    assert "\\x1b[2J[bold]x[/]\\r" in out  # shown literally, escaped, markup not interpreted


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--gamma", "0"], "--gamma must be"),
        (["--eta", "2"], "--eta must be"),
        (["--tau", "1.5"], "--tau must be"),
        (["--delta", "-1"], "--delta must be"),
        (["--gamma-min", "5", "--gamma-max", "3"], "--gamma-min"),
        (["--method", "bogus"], "unknown method"),
        (["--temperature", "-1"], "--temperature must be"),
        (["--top-p", "0"], "--top-p must be"),
        (["--top-k", "-2"], "--top-k must be"),
        (["--max-new-tokens", "0"], "max-new-tokens"),
        (["--quantize", "int3"], "quantize"),
        (["--dtype", "float8"], "dtype"),
        (["--device", "tpu"], "device"),
    ],
)
def test_run_bad_values_are_one_line_exit_2(capsys, pair_args, extra, needle):
    code, out, err = invoke(["run", "hi", *pair_args, *extra], capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gammatune: error:") and needle in lines[0]
    assert not any(name in lines[0] for name in ("gamma0", "gamma_min", "top_p", "top_k"))  # the flags' names


def test_run_model_errors_are_one_line_exit_2(capsys, tiny_pair_dirs, tmp_path):
    t, _ = tiny_pair_dirs
    cases = [
        (["--target", str(t), "--draft", str(tmp_path / "missing")], "no such directory"),
        (["--target", str(t)], "both"),
        (["--pair", "nope"], "unknown pair"),
        (["--target", str(t), "--draft", str(t), "--record", str(tmp_path / "no" / "dir" / "x.jsonl")], "recording"),
    ]
    for extra, needle in cases:
        code, out, err = invoke(["run", "hi", *extra], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and needle in lines[0], (extra, err)


def test_run_tokenizer_mismatch_exit_2(capsys, tiny_pair_dirs, tmp_path):
    from tiny_models import make_llama, make_word_tokenizer

    tok = make_word_tokenizer(list("abcdefgh"))
    d = tmp_path / "other"
    make_llama(len(tok), seed=5, eos=None, bos=None).save_pretrained(d)
    tok.save_pretrained(d)
    code, out, err = invoke(["run", "hi", "--target", str(tiny_pair_dirs[0]), "--draft", str(d)], capsys)
    assert code == 2 and "tokenizers differ" in err and len(err.strip().splitlines()) == 1


def test_models_lists_presets_and_demo(capsys):
    code, out, err = invoke(["models"], capsys)
    assert code == 0
    for name in ("vicuna-13b", "vicuna-7b", "llama-70b", "llama-8b", "qwen-7b", "demo"):
        assert name in out
    assert "lmsys/vicuna-13b-v1.5" in out and "double7/vicuna-68m" in out
    code, out, err = invoke(["models", "--json"], capsys)
    data = json.loads(out)
    assert len(data["presets"]) == 6 and "installed" in data["demo"]
    assert all(isinstance(p["target_cached"], bool) for p in data["presets"])


def _subprocess(args, **kw):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "gammatune_tui", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, **kw)


def test_subprocess_error_is_one_line_no_traceback(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    r = _subprocess(["run", "hi", "--target", str(t), "--draft", str(d), "--gamma", "0"])
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("gammatune: error:")


def test_subprocess_json_run(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    r = _subprocess(["run", "x = ", "--target", str(t), "--draft", str(d), "-n", "6", "--json", "--device", "cpu"])
    assert r.returncode == 0, r.stderr
    kinds = [json.loads(line)["type"] for line in r.stdout.splitlines()]
    assert kinds[0] == "header" and kinds[-1] == "summary" and set(kinds[1:-1]) == {"step"}


def test_run_demo_pair_defaults_to_sampling(capsys):
    from gammatune_tui.resources import demo_pair_installed

    if not demo_pair_installed():
        pytest.skip("the embedded demo pair is not installed")
    code, out, err = invoke(["run", "def f(x):", "-n", "5", "--json", "--threads", "1"], capsys)
    assert code == 0, err
    header = json.loads(out.splitlines()[0])
    assert header["demo"] is True and header["sampling"]["temperature"] == 0.7 and header["sampling"]["top_p"] == 0.9
    code, out, err = invoke(["run", "def f(x):", "-n", "5", "--json", "-t", "0", "--threads", "1"], capsys)
    assert json.loads(out.splitlines()[0])["sampling"]["temperature"] == 0.0


@pytest.mark.parametrize("engine, shown", [("eager", "eager runner"), ("static", "static runner")])
def test_run_header_names_the_runner_and_the_warm_up(capsys, pair_args, engine, shown):
    code, _, err = invoke(["run", "def f(x):", *pair_args, "-n", "6", "--raw", "-t", "0", "--engine", engine], capsys)
    assert code == 0, err
    first = err.splitlines()[0]
    assert shown in first and "loaded in " in first   # and where the load went, stage by stage (load_stages.py)


def test_a_recording_names_the_tokenizer_as_the_target_not_by_an_absolute_path(capsys, tmp_path):
    from gammatune_tui.resources import demo_pair_installed

    if not demo_pair_installed():
        pytest.skip("the embedded demo pair is not installed")
    rec = tmp_path / "r.jsonl"
    code, out, err = invoke(["run", "def f(x):", "-n", "3", "--threads", "1", "--json", "--record", str(rec)], capsys)
    assert code == 0, err
    header = json.loads(rec.read_text().splitlines()[0])
    assert header["target"] == header["tokenizer"] == "demo/target"


def test_run_header_names_the_settings_as_the_flags_that_set_them(capsys):
    """Issue 17 row 19: `--eta 0.7 … --top-p 0.9`, copyable into the next command, not `eta=0.7, top_p=0.9`."""
    from gammatune_tui.resources import demo_pair_installed

    if not demo_pair_installed():
        pytest.skip("the embedded demo pair is not installed")
    code, _, err = invoke(["run", "def f(x):", "-n", "3", "--threads", "1", "--eta", "0.3", "--top-p", "0.8"], capsys)
    assert code == 0, err
    settings = err.splitlines()[1]
    assert "--eta 0.3" in settings and "--top-p 0.8" in settings and "--temperature 0.7" in settings
    assert "top_p" not in settings and "eta=" not in settings
