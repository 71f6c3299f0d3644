"""The demo pair's shipped traces are what a recording here gives, and a first `--simulate` replays them.

A fresh recording of the first prompts at a small budget and depth must be
a prefix of the shipped traces (tokens, the draft's proposals, their
probabilities and the off-path drafts); a run whose key differs (another
budget) must not use them.
"""

from __future__ import annotations

import math

import pytest
from rich.console import Console

from gammatune_tui.bench.live.protocol import PromptIds
from gammatune_tui.bench.modes import shipped_traces, trace_cache
from gammatune_tui.bench.sim import trace_record
from gammatune_tui.commands.options import default_options
from gammatune_tui.engine.loading.models import load_pair
from gammatune_tui.prompts import load_prompt_set

SMALL_TOKENS, SMALL_DEPTH = 24, 3


@pytest.fixture(scope="module")
def demo():
    opts = default_options()
    pair = load_pair(**opts.load_kwargs())
    pid = [PromptIds(p.id, pair.encode_prompt(p.text, raw=False)) for p in load_prompt_set("code")]
    return pair, pid, opts.max_new_tokens


def test_the_shipped_file_is_small_and_covers_the_default_set(demo):
    pair, pid, max_new = demo
    files = list(shipped_traces.SHIPPED_DIR.glob("*.json.gz"))
    assert files and all(f.stat().st_size < 1_500_000 for f in files)
    found = shipped_traces.find_shipped(trace_cache.trace_key(pair, pid, max_new), 24)
    assert found is not None and [t["prompt_id"] for t in found[1]] == [p.id for p in pid]


@pytest.mark.parametrize("i", [0, 17])
def test_a_fresh_recording_is_a_prefix_of_the_shipped_trace(demo, i):
    pair, pid, max_new = demo
    _, rows = shipped_traces.find_shipped(trace_cache.trace_key(pair, pid, max_new), 24)
    shipped = trace_cache.trace_from_json(rows[i])
    p = pid[i]
    fresh = trace_record.record_trace(pair, p.id, list(p.ids), SMALL_TOKENS, SMALL_DEPTH, pair.eos_ids)
    n = len(fresh.tokens)
    assert fresh.tokens == shipped.tokens[:n]
    assert fresh.draft_ids[:n] == shipped.draft_ids[:n]
    assert all(math.isclose(a, b, abs_tol=1e-4) for a, b in zip(fresh.draft_prob[:n], shipped.draft_prob[:n]))
    for j, ids in fresh.off_ids.items():
        assert shipped.off_ids[j][:len(ids)] == ids, j


def test_a_first_simulate_replays_them_and_another_budget_records(demo, tmp_path, monkeypatch):
    pair, pid, max_new = demo
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path))
    timed = []

    def fake_timing(*a, **k):   # the decoder's timing is this machine's, measured in every case; not the point here
        timed.append(1)
        return trace_cache.CostModel(0.001, {1: 0.002}), []

    def no_recording(*a, **k):
        raise AssertionError("recorded traces the package ships")

    monkeypatch.setattr(trace_cache, "time_decoder", fake_timing)
    monkeypatch.setattr(trace_cache, "record", no_recording)
    ts = trace_cache.load_or_record(Console(stderr=True), pair, pid[:4], max_new, 24)
    assert ts.source == "shipped" and [t.prompt_id for t in ts.traces] == [p.id for p in pid[:4]] and timed
    assert all(t.session_s > 0 for t in ts.traces)   # measured here, not another machine's
    assert shipped_traces.find_shipped(trace_cache.trace_key(pair, pid[:4], max_new - 1), 24) is None
    assert shipped_traces.find_shipped(trace_cache.trace_key(pair, pid[:4], max_new), 25) is None
