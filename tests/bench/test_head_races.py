"""benchmarks/dflash_vs_hf.py and assistant_vs_hf.py at tiny shapes: the races against transformers' own head
generators keep running as transformers moves, and every side's tokens are plain greedy `generate`'s (what the
speed-up in docs/benchmarks-heads.md rests on)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script, shape", [
    ("dflash_vs_hf.py", ["--hidden", "64", "--layers", "3", "--block", "4", "--train-steps", "5"]),
    ("assistant_vs_hf.py", ["--hidden", "64", "--layers", "6"]),   # a third of its layers share keys
])
def test_a_race_against_transformers_runs_and_every_side_speaks_as_generate(tmp_path, script, shape):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *shape, "--tokens", "16", "--repeats",
                          "1", "--json", str(tmp_path / "race.json")], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    race = json.loads((tmp_path / "race.json").read_text())
    assert race["identical"] == {"hf": True, "g": True, "gplus": True}
    assert race["tokens_per_s"]["hf"] > 0 and race["tokens_per_s"]["g"] > 0
    assert "| yes |" in out.stdout


def test_the_mtp_race_against_use_mtp_runs_and_the_reduced_head_drafts_the_whole_heads_token_in_its_n(tmp_path):
    from tiny_mtp import runs_heads

    if not runs_heads():
        pytest.skip("this transformers' MtpModel runs no head layer alone (use_mtp needs 5.24)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "mtp_vs_hf.py"), "--hidden", "64", "--layers",
                          "2", "--vocab", "4096", "--text-ids", "256", "--mtp-vocab", "512", "--tokens", "16",
                          "--repeats", "1", "--json", str(tmp_path / "race.json")], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    race = json.loads((tmp_path / "race.json").read_text())
    assert set(race["families"]) == {"mellum", "deepseek_v3"}
    for family, row in race["families"].items():
        # every side (transformers, γ 1, gammatune+, γ 1 over 512 tokens) speaks as plain generate
        assert row["identical"] and row["drafts_equal"] and row["positions_compared"] > 0, family
        reduced = row["reduced"]
        assert reduced["drafts_in_s"] > 0 and reduced["drafts_equal"] == reduced["drafts_in_s"], family
        assert row["tokens_per_s"]["hf"] > 0 and reduced["tokens_per_s"] > 0
