"""benchmarks/field_table.py: AdaEDL's λ0 fitted on the even prompts only; every method reported on the odd ones."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

from gammatune_tui.engine.policies import METHODS
from tests.bench.test_fit_defaults import _write
from tests.bench.test_policy_study import _cost, _trace

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "field_table.py"


def _script():
    spec = importlib.util.spec_from_file_location("field_table", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _with_entropy(seed: int):
    """A trace as policy_study's tests make them, deep enough for γ0 = 24, with entropies (0.1 … 4 nats)."""
    t = _trace(seed, depth=24)
    rng = random.Random(seed + 7)
    t.draft_entropy = [rng.uniform(0.1, 4.0) for _ in t.tokens]
    t.off_entropy = {j: [rng.uniform(0.1, 4.0) for _ in xs] for j, xs in t.off_ids.items()}
    return t


def test_lambda0_is_fitted_on_the_even_prompts_and_every_method_is_reported_on_the_odd(tmp_path, monkeypatch, capsys):
    field = _script()
    monkeypatch.setattr(field, "LAMBDAS", [0.0, 0.3, 0.8])
    monkeypatch.setattr(field, "SENSITIVITY", {"p-min": ("p_min", [0.5, 0.75])})
    cost = _cost(0.8, {1: 5.0, 2: 5.4, 3: 5.8, 9: 8.0, 25: 13.0})
    traces = [_with_entropy(s) for s in range(6)]
    other = [t if i % 2 == 0 else _with_entropy(100 + i) for i, t in enumerate(traces)]
    a, b = _write(tmp_path / "a.json", traces, cost), _write(tmp_path / "b.json", other, cost)
    out1, out2 = tmp_path / "1.json", tmp_path / "2.json"
    assert field.main([str(a), "--json", str(out1)]) == 0
    assert field.main([str(b), "--json", str(out2)]) == 0
    r1, r2 = json.loads(out1.read_text(encoding="utf-8")), json.loads(out2.read_text(encoding="utf-8"))
    assert r1["lambda0_fitted"] == r2["lambda0_fitted"] in (0.0, 0.3, 0.8)   # the odd prompts never enter the fit
    rows = r1["sets"]["T = 0"]["rows"]
    assert {r["method"] for r in rows} >= set(METHODS) | {"oracle", "perfect signal"}
    t2 = {r["method"]: r["table2"] for r in rows if r["table2"]}
    assert len(t2) == len(METHODS) + 1 and abs(t2["specdecode"][0] - 1.0) < 1e-9   # every method and the oracle
    assert rows != r2["sets"]["T = 0"]["rows"]   # …and the report reads them
    assert all(r["rank"] for r in rows if r["method"] != "oracle")
    assert "| rank | method | group |" in capsys.readouterr().out


def test_limit_reads_only_the_first_prompts_of_each_set(tmp_path):
    field = _script()
    cost = _cost(0.8, {1: 5.0, 2: 5.4, 3: 5.8, 9: 8.0, 25: 13.0})
    traces = [_with_entropy(s) for s in range(6)]
    full, first4 = _write(tmp_path / "full.json", traces, cost), _write(tmp_path / "first4.json", traces[:4], cost)
    out_lim, out_4, out_full = tmp_path / "lim.json", tmp_path / "4.json", tmp_path / "full6.json"
    assert field.main([str(full), "--limit", "4", "--lambda0", "0.1", "--json", str(out_lim)]) == 0
    assert field.main([str(first4), "--lambda0", "0.1", "--json", str(out_4)]) == 0
    assert field.main([str(full), "--lambda0", "0.1", "--json", str(out_full)]) == 0
    lim, four, whole = (json.loads(p.read_text(encoding="utf-8")) for p in (out_lim, out_4, out_full))
    assert lim == four                 # the same numbers as a file holding only those prompts
    assert lim != whole                # …and not the whole file's


def test_limit_below_two_prompts_is_one_clear_error(tmp_path, capsys):
    field = _script()
    cost = _cost(0.8, {1: 5.0, 2: 5.4, 3: 5.8, 9: 8.0, 25: 13.0})
    path = _write(tmp_path / "a.json", [_with_entropy(s) for s in range(4)], cost)
    try:
        field.main([str(path), "--limit", "1"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--limit 1 was accepted")
    assert "--limit needs at least 2 prompts" in capsys.readouterr().err
