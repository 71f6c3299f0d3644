"""A closed stdout pipe is a quiet exit 0; Ctrl+C is one line and exit 130, with what was kept (issue 17 rows 5, 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clihelpers import invoke
from gammatune_tui.engine.events import StepEvent

REPO = Path(__file__).resolve().parents[2]


def _closed_reader(args, tmp_path):
    """Runs gammatune with a stdout pipe whose reader has already gone (as `… | head -0` would leave it)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-m", "gammatune_tui", *args], stdout=w, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, env=env, cwd=tmp_path, timeout=300, text=True)
    finally:
        os.close(w)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("args", [
    ["--help"],
    ["models"],
    ["models", "--json"],
    ["replay", "all-methods", "--print", "--speed", "0"],
])
def test_a_closed_pipe_is_a_quiet_exit_0(args, tmp_path):
    code, err = _closed_reader(args, tmp_path)
    assert code == 0, err
    assert err == ""


@pytest.mark.parametrize("extra", [["--json"], []])
def test_run_into_a_closed_pipe_is_a_quiet_exit_0(extra, pair_args, tmp_path):
    code, err = _closed_reader(["run", "hi", *pair_args, "-n", "8", *extra], tmp_path)
    assert code == 0, err
    assert "Traceback" not in err and "Error" not in err and "error" not in err


def _interrupt_after(monkeypatch, steps: int) -> None:
    """Ctrl+C arrives once the decoder has yielded `steps` steps."""
    from gammatune_tui.engine import decoder as decoder_mod

    real = decoder_mod.SpeculativeDecoder.generate

    def interrupted(self, prompt, max_new_tokens=128, **kw):
        seen = 0
        for ev in real(self, prompt, max_new_tokens, **kw):
            if isinstance(ev, StepEvent) and kw.get("user_text"):   # the user's session, not the warm-up
                if seen == steps:
                    raise KeyboardInterrupt
                seen += 1
            yield ev

    monkeypatch.setattr(decoder_mod.SpeculativeDecoder, "generate", interrupted)


def test_ctrl_c_during_run_says_how_much_was_generated_and_kept(capsys, pair_args, monkeypatch, tmp_path):
    _interrupt_after(monkeypatch, 3)
    rec = tmp_path / "cut.jsonl"
    code, out, err = invoke(["run", "hi", *pair_args, "-n", "40", "-t", "0", "--json", "--record", str(rec)], capsys)
    assert code == 130, (out, err)
    steps = [json.loads(line) for line in out.splitlines() if json.loads(line)["type"] == "step"]
    tokens = sum(len(s["emitted"]) for s in steps)
    assert len(steps) == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"gammatune: interrupted — {tokens} tokens generated; {rec} keeps the 3 steps")
    kept = [json.loads(line)["type"] for line in rec.read_text().splitlines()]
    assert kept == ["header", "step", "step", "step"]
    code, out, err = invoke(["replay", str(rec), "--print", "--speed", "0"], capsys)
    assert code == 0, err


def test_ctrl_c_during_run_on_the_terminal_path(capsys, pair_args, monkeypatch):
    _interrupt_after(monkeypatch, 0)
    code, out, err = invoke(["run", "hi", *pair_args, "-n", "40"], capsys)
    assert code == 130
    assert err.strip().splitlines()[-1] == "gammatune: interrupted — 0 tokens generated"
    assert "Traceback" not in err


def test_ctrl_c_anywhere_else_is_one_line_and_130(capsys, monkeypatch):
    import gammatune_tui.render.console as console_mod

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(console_mod, "FittingConsole", interrupt)
    code, out, err = invoke(["models"], capsys)
    assert code == 130
    assert err.strip() == "gammatune: interrupted"


def test_ctrl_c_during_a_live_bench_keeps_the_finished_rows(capsys, pair_args, monkeypatch, tmp_path):
    from gammatune_tui.bench.live import protocol

    real = protocol.run_policy
    calls = {"n": 0}

    def interrupt_third(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(protocol, "run_policy", interrupt_third)
    monkeypatch.setattr(protocol, "warm_up", lambda *a, **k: None)   # so the calls counted are the sweep's
    out_json = tmp_path / "b.json"
    code, out, err = invoke(["bench", *pair_args, "--methods", "specdecode,gammatune+", "--gammas", "2,4", "-n", "8",
                             "--limit", "2", "--no-baselines", "--out", str(out_json)], capsys)
    assert code == 130, err
    assert err.strip().splitlines()[-1] == (f"gammatune: interrupted — 2 of 8 runs finished; {out_json} and "
                                            f"{out_json.with_suffix('.csv')} hold them")
    data = json.loads(out_json.read_text())
    assert len(data["live"]["records"]) == 2 and data["live"]["checks"]["interrupted"] is True
    assert out_json.with_suffix(".csv").read_text().strip()
    assert "interrupted after 2 of 8 runs" in out
