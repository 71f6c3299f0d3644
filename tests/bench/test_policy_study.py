"""benchmarks/policy_study.py: a cost model saved with its timing passes keeps the spread when reused."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.bench.sim.simulate import Trace

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "policy_study.py"
EOS = 0


def _study():
    spec = importlib.util.spec_from_file_location("policy_study", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _trace(seed: int, n: int = 40, depth: int = 16) -> Trace:
    """A greedy trace whose draft agrees with the target about two times in three (no EOS)."""
    rng = random.Random(seed)
    tokens = [rng.randint(1, 50) for _ in range(n)]
    dids, probs, off_ids, off_prob = [], [], {}, {}
    for j, tok in enumerate(tokens):
        agree = rng.random() < 0.67
        dids.append(tok if agree else tok % 50 + 1)
        probs.append(rng.uniform(0.6, 1.0) if agree else rng.uniform(0.05, 0.7))
        if not agree:
            off_ids[j] = [rng.randint(1, 50) for _ in range(depth)]
            off_prob[j] = [rng.uniform(0.05, 1.0) for _ in range(depth)]
    return Trace(prompt_id=f"p{seed}", prompt_ids=[3], tokens=tokens, draft_ids=dids, draft_prob=probs,
                 off_ids=off_ids, off_prob=off_prob, off_depth=depth, eos_ids=[EOS], max_new_tokens=n,
                 session_s=0.01, plain_s=0.02 * n)


def _cost(draft_ms: float, verify_ms: dict[int, float]) -> CostModel:
    return CostModel(draft_token_s=draft_ms / 1e3, verify_s={k: v / 1e3 for k, v in verify_ms.items()})


def test_a_saved_cost_model_brings_its_timing_passes_and_their_spread(tmp_path):
    traces = [_trace(s) for s in range(4)]
    pooled = _cost(1.0, {1: 5.0, 2: 5.5, 3: 5.4, 9: 9.0, 25: 12.0})
    passes = [_cost(0.8, {1: 4.0, 2: 4.6, 3: 4.3, 9: 7.5, 25: 10.0}), _cost(1.3, {1: 6.5, 2: 6.9, 3: 7.0, 9: 11.0,
                                                                                   25: 15.0})]
    tfile = tmp_path / "traces.json"
    tfile.write_text(json.dumps({"key": {"target": "t", "draft": "d", "max_new_tokens": 40, "sampling": None},
                                 "cost_model": pooled.to_json(), "cost_passes": [],
                                 "traces": [t.to_json() for t in traces]}), encoding="utf-8")
    cfile = tmp_path / "cost.json"
    study = _study()
    # --save-cost writes the pooled model and each pass; --cost reads both back
    cfile.write_text(json.dumps({"cost_model": pooled.to_json(), "cost_passes": [c.to_json() for c in passes]}),
                     encoding="utf-8")
    out = tmp_path / "study.json"
    assert study.main(["--traces", str(tfile), "--cost", str(cfile), "--save-cost", str(tmp_path / "again.json"),
                       "--json", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "2 timing passes" in result["label"]
    best = next(r for r in result["rows"] if r["method"].startswith("best fixed"))
    assert best["pass_spread"] > 0  # the shares under the two passes differ from the pooled model's
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert len(again["cost_passes"]) == 2 and again["cost_model"]["verify_s"]["3"] == 5.4e-3
    # an older cost file (a bare cost model) still reads, with no passes to spread over
    cfile.write_text(json.dumps(pooled.to_json()), encoding="utf-8")
    assert study.main(["--traces", str(tfile), "--cost", str(cfile), "--json", str(out)]) == 0
    assert "0 timing passes" in json.loads(out.read_text(encoding="utf-8"))["label"]
