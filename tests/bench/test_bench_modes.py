"""`gammatune bench` end to end on a tiny random-weight pair: the simulated sweep (checked live), tuning, Table 1."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.cli import main


def _bench(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(["bench", *argv])
    cap = capsys.readouterr()
    assert exc.value.code == 0, cap.err
    return cap.out


@pytest.fixture
def prompts(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"id": "a", "category": "function", "turns": ["def add(a, b):"]}\n'
                    '{"id": "b", "category": "class", "turns": ["class Stack:"]}\n')
    return path


def test_simulated_sweep_checked_against_live_runs(tiny_pair_dirs, prompts, tmp_path, capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "bench.json"
    # γ0 = 2 is below the GammaTune policies' γ_min (4): their windows are longer than any γ0 asked for
    text = _bench(capsys, "--simulate", "--validate", "--check-live", "1", "--target", str(t), "--draft", str(d),
                  "--device", "cpu", "--prompts", str(prompts), "-n", "16", "--gammas", "2",
                  "--methods", "specdecode,gammatune", "--no-baselines", "--raw", "-o", str(out))
    assert "Table 2 (simulated)" in text and "Simulator vs live" in text
    data = json.loads(out.read_text())
    assert {"sim", "live", "live_check", "validation"} <= set(data)
    assert data["live_check"]["step_exact"] == data["live_check"]["total"] == 2
    assert data["validation"]["steps_equal"] == 2
    sim_cells = {(c["method"], c["gamma0"]): c for c in data["sim"]["cells"]}
    assert sim_cells[("gammatune", 2)]["tokens"] == 32 and sim_cells[("gammatune", 2)]["target_calls"] > 0
    assert out.with_suffix(".csv").read_text().startswith("kind,method,gamma0")


def test_simulated_table2_has_the_oracle_on_top_and_each_methods_share_of_it(tiny_pair_dirs, prompts, tmp_path,
                                                                              capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "bench.json"
    text = _bench(capsys, "--simulate", "--check-live", "0", "--target", str(t), "--draft", str(d), "--device", "cpu",
                  "--prompts", str(prompts), "-n", "16", "--gammas", "1,3", "--methods", "specdecode,adaptive-k",
                  "--raw", "-o", str(out))
    table2 = text[text.index("Table 2 (simulated)"):]
    lines = table2.splitlines()   # boxed when it fits, plain (no borders) when it must fit 80 columns
    rule = next(i for i, line in enumerate(lines) if "━" in line or "─" in line)
    assert lines[rule + 1].strip("│ ").split()[0] == "oracle"  # the top row
    assert "share of" in table2 and "oracle" in table2
    regret_table = text[text.index("Share of the oracle's throughput"):]
    assert "function" in regret_table and "class" in regret_table  # per prompt category
    data = json.loads(out.read_text())
    regret = data["sim"]["derived"]["regret"]
    assert set(regret) == {"specdecode", "adaptive-k", "target-only"}
    for name, r in regret.items():
        assert r["mean"] > 0 and set(r["per_category"]) == {"function", "class"}
        # the oracle bounds every speculative method on its own traces and cost model; target-only decoding is
        # another loop, priced from its own timing, and can beat it (then no draft is worth it: doctor says so)
        if name != "target-only":
            assert r["mean"] <= 1 + 1e-9
    oracle = data["sim"]["oracle"]
    assert oracle["tokens"] == 32 and set(oracle["windows"]) == {"a", "b"}
    # beside the oracle: the reference rows, every share with its spread over timing passes and prompts, ranks
    shares = text[text.index("Share of the oracle, with the reference rows"):]
    for ref in ("best fixed γ (γ = ", "perfect signal", "oracle, no skip", "specdecode", "adaptive-k"):
        assert ref in shares
    assert "± passes" in shares and "± prompts" in shares
    # the table fits 80 columns; in a pipe its caption stays one line (every value in full, grep-friendly)
    assert max(len(line) for line in shares.splitlines() if not line.startswith("share = ")) <= 80
    rows = {r["name"]: r for r in data["sim"]["shares"]}
    assert data["sim"]["timing_passes"] == 3 and all(len(r["passes"]) == 3 for r in rows.values())
    assert rows["best fixed γ"]["share"] <= rows["perfect signal"]["share"] + 1e-9
    csv_rows = {(r.split(",")[1], r.split(",")[2]): r for r in out.with_suffix(".csv").read_text().splitlines()[1:]}
    header = out.with_suffix(".csv").read_text().splitlines()[0].split(",")
    share = header.index("share_of_oracle")
    assert float(csv_rows[("oracle", "")].split(",")[share]) == 1.0
    assert 0 < float(csv_rows[("specdecode", "3")].split(",")[share]) <= 1.0


def test_tune_adaptive_k_searches_its_own_parameters(tiny_pair_dirs, prompts, tmp_path, capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "tune.json"
    text = _bench(capsys, "--tune", "--tune-method", "adaptive-k", "--check-live", "0", "--target", str(t),
                  "--draft", str(d), "--device", "cpu", "--prompts", str(prompts), "-n", "12", "--gammas", "2,4",
                  "--raw", "--cooldown", "0", "-o", str(out))
    flat = " ".join(text.split())
    assert "best: --ema-alpha" in flat and "--cooldown" in flat and "--eta" not in flat
    assert "your settings" in flat  # the search starts from the --cooldown given
    tune = json.loads(out.read_text())["tune"]
    assert tune["method"] == "adaptive-k" and tune["start"]["params"]["cooldown"] == 0
    assert tune["best"]["score"] >= tune["start"]["score"]


def test_tune_reports_the_best_parameters(tiny_pair_dirs, prompts, tmp_path, capsys):
    t, d = tiny_pair_dirs
    out = tmp_path / "tune.json"
    text = _bench(capsys, "--tune", "--check-live", "0", "--target", str(t), "--draft", str(d), "--device", "cpu",
                  "--prompts", str(prompts), "-n", "12", "--gammas", "2,4", "--raw", "-o", str(out))
    assert "best: --eta" in " ".join(text.split())
    assert "recommended" in text   # two prompts: too few for the held-out check, so unchecked or the defaults
    tune = json.loads(out.read_text())["tune"]
    assert tune["recommended"]["kind"] in ("unchecked", "defaults")
    # the tuned and starting settings sit beside the reference rows, with spreads
    assert "--tune gammatune+ beside the reference rows" in text
    names = {r["name"] for r in tune["shares"]["rows"]}
    assert {"gammatune+, tuned", "gammatune+, current defaults", "best fixed γ", "perfect signal",
            "oracle, no skip"} == names
    assert tune["method"] == "gammatune+" and tune["candidates"] and tune["best"]["score"] >= tune["start"]["score"]


def test_latency_times_a_shape_from_its_config(tmp_path, capsys):
    cfg = tmp_path / "tiny" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 32, "intermediate_size": 64,
                               "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
                               "vocab_size": 64, "max_position_embeddings": 128}))
    out = tmp_path / "lat.json"
    text = _bench(capsys, "--latency", "--shape", str(cfg), "--latency-context", "8", "--verify-k", "1,2",
                  "--device", "cpu", "--threads", "1", "-o", str(out))
    assert "Table 1" in text and "tiny" in text and "runner" in text
    rows = json.loads(out.read_text())["rows"]
    # auto on a CPU: transformers' own forward beside every runner the CPU has, each with its share of bandwidth
    assert [r["runner"] for r in rows] == ["transformers", "eager", "static"]
    for row in rows:
        assert row["name"] == "tiny" and row["decode_ms"] > 0 and set(row["verify_ms"]) == {"1", "2"}
        assert row["decode_gbs"] > 0 and row["copy_gbs"] > 0 and 0 < row["bandwidth_pct"]
    _bench(capsys, "--latency", "--shape", str(cfg), "--latency-context", "8", "--verify-k", "1",
           "--device", "cpu", "--threads", "1", "--engine", "static", "-o", str(out))
    assert [r["runner"] for r in json.loads(out.read_text())["rows"]] == ["static"]


def test_second_simulate_reuses_the_cached_traces_and_refresh_records_again(tiny_pair_dirs, prompts, tmp_path,
                                                                           capsys, monkeypatch):
    from gammatune_tui.bench.sim import trace_record as sim_mod

    cache = tmp_path / "cache"
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(cache))
    recorded = []
    real = sim_mod.record_trace
    monkeypatch.setattr(sim_mod, "record_trace", lambda *a, **k: recorded.append(a[1]) or real(*a, **k))
    t, d = tiny_pair_dirs
    args = ["--simulate", "--target", str(t), "--draft", str(d), "--device", "cpu", "--prompts", str(prompts),
            "-n", "12", "--gammas", "2,4", "--methods", "specdecode,gammatune+", "--raw"]

    def run(*extra):
        out = tmp_path / f"b{len(recorded)}.json"
        with pytest.raises(SystemExit) as exc:
            main(["bench", *args, "-o", str(out), *extra])
        cap = capsys.readouterr()
        assert exc.value.code == 0, cap.err
        return json.loads(out.read_text()), " ".join(cap.err.split())

    first, err1 = run()
    assert recorded == ["a", "b"] and "kept in" in err1 and str(cache) in err1
    assert "live_check" in first                               # recorded now: checked live
    files = list((cache / "traces").glob("*.json"))
    assert len(files) == 1
    second, err2 = run()
    assert recorded == ["a", "b"]                              # nothing recorded again
    assert "using the traces and cost model in" in err2 and "live check skipped" in err2
    assert "live_check" not in second
    assert second["sim_setup"]["cost_model"] == first["sim_setup"]["cost_model"]
    assert second["sim"]["cells"] == first["sim"]["cells"]    # the same traces and prices: the same table
    run("-n", "10")                                            # another budget is another key
    assert recorded == ["a", "b", "a", "b"]
    run("--refresh-traces", "--check-live", "0")
    assert recorded == ["a", "b", "a", "b", "a", "b"]
