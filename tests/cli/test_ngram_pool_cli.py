"""`--drafter ngram-pool` on run, compare and bench: picked up from its registry row, exact, and simulated."""

from __future__ import annotations

import json

from gammatune_tui.engine.events import event_from_json
from clihelpers import invoke


def test_run_and_compare_draft_with_the_pool(capsys, tiny_pair_dirs):
    t = ["--target", str(tiny_pair_dirs[0]), "--device", "cpu", "--threads", "1"]
    code, out, err = invoke(["run", "abcabcabcabc", *t, "--drafter", "ngram-pool", "--ngram-max", "2", "-n", "12",
                             "--raw", "--json"], capsys)
    assert code == 0, err
    header = event_from_json(json.loads(out.splitlines()[0]))
    assert header.drafter == "ngram-pool" and header.drafter_params == {"ngram_min": 1, "ngram_max": 2}
    code, out, err = invoke(["run", "abcabcabcabc", *t, "--drafter", "ngram-pool", "-n", "12", "--raw", "-t", "0"],
                            capsys)
    assert code == 0, err   # the oracle line says why it has no number, not a share it cannot know
    assert "oracle: none for ngram-pool, which drafts from earlier turns too" in " ".join(err.split())
    code, out, err = invoke(["compare", "--print", "abcabcabc", *t, "--drafters", "ngram-pool,prompt-lookup",
                             "-M", "specdecode", "-n", "8", "--raw", "--repeats", "1"], capsys)
    assert code == 0, err
    assert "pool" in out and "lookup" in out


def test_bench_simulates_the_pool_exactly(capsys, tiny_pair_dirs, tmp_path):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a", "turns": ["abcabcabcab"]}\n{"id": "b", "turns": ["def f(x): return f(x)"]}\n')
    out = tmp_path / "sim.json"
    code, text, err = invoke(["bench", "--simulate", "--check-live", "2", "--drafter", "ngram-pool", "--target",
                              str(tiny_pair_dirs[0]), "--device", "cpu", "--prompts", str(prompts), "-n", "16",
                              "--gammas", "2,4", "--methods", "specdecode,gammatune+", "--no-baselines", "--raw",
                              "-o", str(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["live_check"]["step_exact"] == data["live_check"]["total"] > 0
    assert all(c["output_equal"] for c in data["live_check"]["checks"])
