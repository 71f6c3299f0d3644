"""Ctrl+C in `bench --simulate` and `bench --latency` says what was kept, in the words run and live bench use.

"gammatune: interrupted — …" and exit 130, never a bare "interrupted": the
traces recorded so far and where they are kept, the rows measured and where they went.
The Ctrl+C is raised from a patched point (or sent as a real SIGINT from one), so no timing is involved.
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


def _sigint_in_call(n, real):
    """Ctrl+C as call `n` starts: the n-th trace is interrupted (n − 1 finished). Raised here, where a real SIGINT's
    KeyboardInterrupt would surface: a signal sent with os.kill is handled at Python's next check, which under a
    loaded CI machine could fall inside a finalizer, where an exception is printed and dropped (a flaky run
    recorded every trace and exited 0)."""
    calls = {"n": 0}

    def patched(*a, **k):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    return patched


def _count_calls(real, calls):
    def counted(*a, **k):
        calls.append(a[1])   # the prompt's id
        return real(*a, **k)

    return counted


def test_ctrl_c_after_a_trace_keeps_it_and_the_next_run_records_only_the_rest(capsys, pair_args, monkeypatch,
                                                                              tmp_path):
    """Issue 24 row 11: "8 of 8 traces recorded, none kept", and the next run recorded them all again."""
    from gammatune_tui.bench.modes import trace_cache   # patched through its own names: where it looks them up

    cache = tmp_path / "cache"
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(cache))
    monkeypatch.setattr(trace_cache.protocol, "warm_up", lambda *a, **k: None)
    from gammatune_tui.bench.sim import trace_record   # the draft model's trace kind records through it

    real = trace_record.record_trace
    monkeypatch.setattr(trace_record, "record_trace", _sigint_in_call(2, real))
    out = tmp_path / "b.json"
    code, _, err = invoke(["bench", *pair_args, *SIM, "--out", str(out)], capsys)
    assert code == 130, err
    partial = list(cache.rglob("*.partial"))
    assert len(partial) == 1 and not list(cache.rglob("*.json"))
    assert _last_line(err) == (f"gammatune: interrupted — 1 of 2 traces recorded, kept in {partial[0]} (the next "
                               f"--simulate records only the rest); {out} not written")

    calls: list = []
    monkeypatch.setattr(trace_record, "record_trace", _count_calls(real, calls))
    code, _, err = invoke(["bench", *pair_args, *SIM, "--out", str(out)], capsys)
    assert code == 0, err
    assert len(calls) == 1                                    # only the second prompt was recorded
    flat = " ".join(err.split())
    assert "resuming: 1 of 2 traces kept in" in flat and "recorded 2 traces (1 of them by the interrupted run) and the cost model" in flat
    assert len(list(cache.rglob("*.json"))) == 1 and not list(cache.rglob("*.partial"))   # finished: one file
    assert out.exists()


def test_ctrl_c_while_timing_keeps_every_trace(capsys, pair_args, monkeypatch, tmp_path):
    from gammatune_tui.bench.modes import trace_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(cache))
    monkeypatch.setattr(trace_cache.protocol, "warm_up", lambda *a, **k: None)
    monkeypatch.setattr(trace_cache, "time_decoder", _raise_on_call(1, trace_cache.time_decoder))
    out = tmp_path / "b.json"
    code, _, err = invoke(["bench", *pair_args, *SIM, "--out", str(out)], capsys)
    assert code == 130, err
    partial = list(cache.rglob("*.partial"))
    assert _last_line(err) == (f"gammatune: interrupted — 2 of 2 traces recorded, kept in {partial[0]} (the decoder "
                               f"was not timed yet: the next --simulate times it); {out} not written")


def test_a_partial_file_cut_mid_line_keeps_the_traces_before_the_cut(tmp_path):
    from types import SimpleNamespace

    from gammatune_tui.bench.modes.trace_partial import PartialTraces

    class T(SimpleNamespace):
        def to_json(self):
            return {"prompt_id": self.pid}

    import gammatune_tui.bench.modes.trace_partial as mod

    key = {"k": 1}
    path = tmp_path / "t.json.partial"
    keep = PartialTraces(path, key, 4)
    keep.add("a", T(pid="a"))
    keep.add("b", T(pid="b"))
    path.write_text(path.read_text()[:-7])              # a crash mid-line
    orig = mod.trace_from_json
    try:
        mod.trace_from_json = lambda d: d["prompt_id"]
        again = PartialTraces(path, key, 4)
        assert again.load() == {"a": "a"}
        again.add("c", T(pid="c"))                       # appended after the cut, whole
        assert PartialTraces(path, key, 4).load() == {"a": "a", "c": "c"}
        assert PartialTraces(path, {"k": 2}, 4).load() == {}   # another key: nothing crosses
        assert PartialTraces(path, key, 8).load() == {}        # shallower traces do not serve a deeper run
    finally:
        mod.trace_from_json = orig


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
