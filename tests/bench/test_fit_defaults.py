"""benchmarks/fit_defaults.py: one GammaTune+ setting for every temperature, chosen on the even prompts only."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from tests.bench.test_policy_study import _cost, _trace

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fit_defaults.py"


def _fit():
    spec = importlib.util.spec_from_file_location("fit_defaults", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write(path: Path, traces, cost) -> Path:
    path.write_text(json.dumps({"key": {"target": "t", "draft": "d", "max_new_tokens": 40, "sampling": None},
                                "cost_model": cost.to_json(), "cost_passes": [],
                                "traces": [t.to_json() for t in traces]}), encoding="utf-8")
    return path


def test_the_fit_reads_only_the_even_prompts_and_keeps_settings_that_move_gamma(tmp_path, monkeypatch, capsys):
    fit = _fit()
    monkeypatch.setattr(fit, "GRID", {"gamma_min": [1, 2], "gamma_max": [8], "eta": [0.5, 0.9], "delta": [1],
                                      "tau": [0.3, 0.6]})
    cheap = _cost(0.5, {1: 5.0, 2: 5.2, 3: 5.4, 9: 7.0, 25: 12.0})
    dear = _cost(2.0, {1: 5.0, 2: 7.0, 3: 9.0, 9: 20.0, 25: 50.0})
    traces = [_trace(s) for s in range(6)]
    a = _write(tmp_path / "a.json", traces, cheap)
    # the odd prompts of the second set are replaced by garbage-free but different traces: the fit must not move
    b_even = _write(tmp_path / "b.json", traces, dear)
    other = [t if i % 2 == 0 else _trace(100 + i) for i, t in enumerate(traces)]
    b_odd = _write(tmp_path / "b2.json", other, dear)
    out1, out2 = tmp_path / "1.json", tmp_path / "2.json"
    assert fit.main([str(a), str(b_even), "--json", str(out1)]) == 0
    assert fit.main([str(a), str(b_odd), "--json", str(out2)]) == 0
    r1, r2 = json.loads(out1.read_text(encoding="utf-8")), json.loads(out2.read_text(encoding="utf-8"))
    assert r1["best"] == r2["best"] and r1["rows"] == r2["rows"]  # the odd prompts never enter the fit
    assert len(r1["rows"]) == 8 and all(len(r["shares"]) == 2 for r in r1["rows"])  # every setting, both sets
    best = next(r for r in r1["rows"] if all(r[k] == v for k, v in r1["best"].items()))
    assert min(best["changed"]) >= 1 / 3  # γ moves at both temperatures
    movers = [r for r in r1["rows"] if min(r["changed"]) >= 1 / 3]
    assert sum(best["shares"]) == max(sum(r["shares"]) for r in movers)  # the best mean share among them
    assert "the methods that share these parameters" in capsys.readouterr().out
