"""benchmarks/signal_bound.py: the policies told the signal in advance choose windows by hand-checkable arithmetic."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from tests.bench.test_field_table import _with_entropy
from tests.bench.test_fit_defaults import _write
from tests.bench.test_policy_study import _cost, _trace

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "signal_bound.py"


def _script():
    spec = importlib.util.spec_from_file_location("signal_bound", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_token_sure_to_be_accepted_is_drafted_and_one_sure_to_be_rejected_is_not():
    bound = _script()
    t = _trace(1, n=12)
    cost = _cost(1.0, {k: 5.0 for k in range(1, 26)})   # a drafted token costs 1 ms, any verify 5 ms
    # told every token will be accepted, at 1 token per 6 ms: each drafted token (1 ms) pays; the cap ends windows
    assert bound.told_windows(t, [1.0] * 12, 1 / 6e-3, cost, 4, 12)[0] == 4
    # told none will be: a window still emits the target's token alone, so drafting costs and earns nothing
    assert set(bound.told_windows(t, [0.0] * 12, 1 / 6e-3, cost, 4, 12)) == {0}
    # …unless every window must hold a token: then the shortest, one (the last step has no room for any)
    assert set(bound.told_windows(t, [0.0] * 12, 1 / 6e-3, cost, 4, 12, min_window=1)[:-1]) == {1}
    # told 1/2 each: the first token adds 1/2 a token for 1 ms; at 1 token per 6 ms (1 ms = 1/6 token) it pays,
    # at 1 token per 1.5 ms (1 ms = 2/3 token) it does not
    assert bound.told_windows(t, [0.5] * 12, 1 / 6e-3, cost, 1, 12)[0] == 1
    assert bound.told_windows(t, [0.5] * 12, 1 / 1.5e-3, cost, 1, 12)[0] == 0


def test_every_share_is_of_the_odd_prompts_and_none_beats_the_oracle(tmp_path, capsys):
    bound = _script()
    cost = _cost(0.8, {1: 5.0, 2: 5.4, 3: 5.8, 9: 8.0, 25: 13.0})
    traces = [_with_entropy(s) for s in range(6)]
    other = [_with_entropy(100 + i) if i % 2 == 0 else t for i, t in enumerate(traces)]   # new even prompts only
    a, b = _write(tmp_path / "a.json", traces, cost), _write(tmp_path / "b.json", other, cost)
    out1, out2 = tmp_path / "1.json", tmp_path / "2.json"
    assert bound.main([str(a), "--json", str(out1)]) == 0
    assert bound.main([str(b), "--json", str(out2)]) == 0
    r1, r2 = json.loads(out1.read_text(encoding="utf-8")), json.loads(out2.read_text(encoding="utf-8"))
    row = r1["a.json (T = 0)"]
    assert row == r2["b.json (T = 0)"]   # the even prompts never enter
    assert set(row) == {"costaware", "best fixed γ per prompt", "told conf", "told conf×ent", "told conf×recent",
                        "told conf, per prompt", "told conf×recent, w ≥ 1", "told conf, per prompt, w ≥ 1"}
    assert all(0.0 < v <= 1.0 + 1e-9 for v in row.values())   # nothing beats the oracle
    assert "| traces | costaware |" in capsys.readouterr().out


def test_costaware_variants_are_fitted_on_the_even_prompts_and_scored_against_shipped_costaware_on_the_odd(tmp_path):
    spec = importlib.util.spec_from_file_location("costaware_variants", SCRIPT.with_name("costaware_variants.py"))
    var = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(var)
    cost = _cost(0.8, {1: 5.0, 2: 5.4, 3: 5.8, 9: 8.0, 25: 13.0})
    traces = [_with_entropy(s) for s in range(6)]
    out = tmp_path / "v.json"
    assert var.main([str(_write(tmp_path / "a.json", traces, cost)), "--json", str(out)]) == 0
    r = json.loads(out.read_text(encoding="utf-8"))
    assert set(r["variants"]) == {"calibration", "price ×κ", "+ entropy", "+ recent acceptance"}
    for v in r["variants"].values():
        odd = v["odd"]["a.json (T = 0)"]
        assert abs(odd["share"] - odd["gap"] - r["shipped"]["a.json (T = 0)"]) < 1e-12
    # κ = 1 is costaware itself: the same windows, the same share
    same = var.Set(str(tmp_path / "a.json"))
    assert same.shares(var.make("price ×κ", {"kappa": 1.0}), "odd") == same.shares(var.make("shipped", {}), "odd")
