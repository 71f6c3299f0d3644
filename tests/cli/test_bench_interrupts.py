"""Ctrl+C in `bench --simulate` and `bench --latency` says what was kept, in the words run and live bench use.

"gammatune: interrupted — …" and exit 130, never a bare "interrupted": the
traces recorded so far (kept or not), the rows measured and where they went.
The Ctrl+C is raised from a patched point, so no timing is involved.
"""

from __future__ import annotations

import json

from clihelpers import invoke


def _raise_on_call(n, real):
    calls = {"n": 0}

    def patched(*a, **k):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    return patched


def _last_line(err):
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    return lines[-1]


SIM = ["--simulate", "--check-live", "0", "--methods", "specdecode,gammatune+", "--gammas", "2,4", "-n", "8",
       "--limit", "2"]


def test_ctrl_c_while_recording_traces_says_how_many_and_that_none_are_kept(capsys, pair_args, monkeypatch,
                                                                           tmp_path):
    from gammatune_tui.bench.modes import trace_cache   # patched through its own names: where it looks them up

    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(trace_cache.protocol, "warm_up", lambda *a, **k: None)
    monkeypatch.setattr(trace_cache.trace_record, "record_trace",
                        _raise_on_call(2, trace_cache.trace_record.record_trace))
    out = tmp_path / "b.json"
    code, _, err = invoke(["bench", *pair_args, *SIM, "--out", str(out)], capsys)
    assert code == 130, err
    assert _last_line(err) == ("gammatune: interrupted — 1 of 2 traces recorded, none kept (traces are kept only "
                               f"once all are recorded and the decoder is timed); {out} not written")
    assert not out.exists() and not list((tmp_path / "cache").rglob("*.json"))


def test_ctrl_c_after_the_traces_are_kept_says_where_they_are(capsys, pair_args, monkeypatch, tmp_path):
    from gammatune_tui.bench.modes import simulate as mode

    cache = tmp_path / "cache"
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(cache))
    monkeypatch.setattr(mode.sim, "simulate_sweep", _raise_on_call(1, mode.sim.simulate_sweep))
    out = tmp_path / "b.json"
    code, _, err = invoke(["bench", *pair_args, *SIM, "--out", str(out)], capsys)
    assert code == 130, err
    kept = list(cache.rglob("*.json"))
    assert len(kept) == 1
    assert _last_line(err) == (f"gammatune: interrupted — the traces and cost model stay in {kept[0]} "
                               f"(the next --simulate reuses them); {out} not written")


def test_ctrl_c_during_latency_keeps_the_rows_measured(capsys, monkeypatch, tmp_path):
    from gammatune_tui.bench.modes import latency as mode

    cfg = tmp_path / "tiny" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 32, "intermediate_size": 64,
                               "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
                               "vocab_size": 64, "max_position_embeddings": 128}))
    monkeypatch.setattr(mode.lat, "measure", _raise_on_call(2, mode.lat.measure))
    out = tmp_path / "lat.json"
    code, text, err = invoke(["bench", "--latency", "--shape", str(cfg), "--latency-context", "8", "--verify-k", "1",
                              "--device", "cpu", "--threads", "1", "-o", str(out)], capsys)
    assert code == 130, err
    # on a CPU auto times three runners (transformers, eager, static): the first was measured
    assert _last_line(err) == (f"gammatune: interrupted — 1 of 3 rows measured; {out} and "
                               f"{out.with_suffix('.csv')} hold them")
    assert [r["runner"] for r in json.loads(out.read_text())["rows"]] == ["transformers"]
    assert "interrupted after 1 of 3 rows" in " ".join(text.split())


def test_ctrl_c_before_any_latency_row_writes_nothing(capsys, monkeypatch, tmp_path):
    from gammatune_tui.bench.modes import latency as mode

    monkeypatch.setattr(mode.lat, "measure", _raise_on_call(1, mode.lat.measure))
    out = tmp_path / "lat.json"
    code, _, err = invoke(["bench", "--latency", "--shape", "vicuna-68m", "--latency-context", "8",
                           "--verify-k", "1", "--device", "cpu", "--threads", "1", "--engine", "eager",
                           "-o", str(out)], capsys)
    assert code == 130, err
    assert _last_line(err) == f"gammatune: interrupted — 0 of 1 rows measured; {out} not written"
    assert not out.exists()
