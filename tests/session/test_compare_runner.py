"""Compare: method parsing, the job (each method alone, same settings), summary and lossless check."""

from __future__ import annotations

import dataclasses

import pytest

from gammatune_tui.engine.events import SessionHeader, StepEvent
from gammatune_tui.engine.policies import METHODS, PolicySettings
from gammatune_tui.engine.sampling import SamplingConfig
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.session.compare import MethodRun, check_lossless, runs_from_recording, summarize
from gammatune_tui.session.compare_job import CompareJob
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.stats import stats_of
from gammatune_tui.session.synthetic import SyntheticSource, synthetic_session


def _job(methods, settings=None, sampling=None, prompt="p", max_new_tokens=30, **kw) -> CompareJob:
    return CompareJob(methods, settings or PolicySettings(), sampling or SamplingConfig(), prompt, max_new_tokens,
                      **kw)


def test_methods_default_is_every_method():
    assert _job("all", factory=_factory([])).methods == list(METHODS)
    assert _job("specdecode, gammatune+", factory=_factory([])).methods == ["specdecode", "gammatune+"]


@pytest.mark.parametrize("bad, msg", [
    ("specdecode", "2 to 6"),
    ("specdecode,specdecode", "more than once"),
    ("specdecode,nope", "unknown method"),
    (",".join(METHODS) + ",gammatune", "more than once"),
])
def test_methods_refused(bad, msg):
    with pytest.raises(InvalidParameter, match=msg):
        _job(bad, factory=_factory([]))


def _factory(calls):
    def make(settings, sampling, label):
        calls.append((settings, sampling, label))
        return SyntheticSource(settings, sampling, label=label)
    return make


def test_job_runs_each_method_once_in_order_with_same_settings(tmp_path):
    calls = []
    base = PolicySettings.build("gammatune+", 6, eta=0.3, tau=0.2)
    sampling = SamplingConfig(temperature=0.0, seed=7)
    progress = []
    path = tmp_path / "c.jsonl"
    runner = _job(["specdecode", "gammatune", "gammatune+"], base, sampling, "prompt", 40, factory=_factory(calls),
                  record=path, warmup_tokens=4)
    summary = runner.run(lambda *a: progress.append(a))
    # warm-up first (not measured), then one decoder per method, in order
    assert [c[2] for c in calls] == ["warm-up", "specdecode", "gammatune", "gammatune+"]
    for settings, samp, label in calls[1:]:
        assert settings.method == label and settings.gamma0 == 6
        assert settings.params == base.params and samp is sampling
    assert [r.label for r in runner.runs] == ["specdecode", "gammatune", "gammatune+"]
    # progress names the method being measured, and ends with (n, n)
    assert progress[0] == (0, 3, "specdecode", 0)
    assert {p[2] for p in progress[:-1]} == {"specdecode", "gammatune", "gammatune+"}
    assert progress[-1][:2] == (3, 3)
    # the recording holds every method's stream, each header labelled
    rec = read_recording(path)
    assert [s.header.label for s in rec.sessions] == ["specdecode", "gammatune", "gammatune+"]
    assert [e.to_json() for e in rec.events] == [e.to_json() for r in runner.runs for e in r.events]
    assert summary.lossless.checked and summary.lossless.identical


def test_summary_numbers_equal_each_methods_own_stats():
    runs = [MethodRun.from_events(synthetic_session(m, seed=1)) for m in METHODS]
    summary = summarize(runs)
    assert [r.tokens_per_s for r in summary.rows] == sorted((r.tokens_per_s for r in summary.rows), reverse=True)
    assert [r.rank for r in summary.rows] == list(range(1, len(METHODS) + 1))
    base = stats_of(runs[0].events)  # specdecode
    for run in runs:
        own = stats_of(run.events)   # what that method's pane computes from its stream
        row = summary.row(run.label)
        assert row.tokens_per_s == own.tokens_per_s
        assert row.acceptance_rate == own.acceptance_rate
        assert row.tokens_per_step == own.tokens_per_step
        assert row.target_calls == own.target_calls == own.steps
        assert row.draft_calls == own.draft_calls
        assert row.speedup == pytest.approx(own.tokens_per_s / base.tokens_per_s)
    assert summary.row("specdecode").speedup == pytest.approx(1.0)
    assert summary.baseline == "specdecode"


def test_speedup_is_none_without_specdecode():
    runs = [MethodRun.from_events(synthetic_session(m)) for m in ("gammatune", "gammatune+")]
    s = summarize(runs)
    assert s.baseline is None and all(r.speedup is None for r in s.rows)


def _with_token(events, step_no, tok_index, new_id):
    out = []
    for e in events:
        if isinstance(e, StepEvent) and e.step == step_no:
            em = list(e.emitted)
            em[tok_index] = dataclasses.replace(em[tok_index], id=new_id, text="X")
            e = dataclasses.replace(e, emitted=em)
        out.append(e)
    return out


def test_lossless_flags_first_difference_and_method():
    ref = synthetic_session("specdecode")
    runs = [MethodRun.from_events(ref), MethodRun.from_events(synthetic_session("gammatune"))]
    assert check_lossless(runs).identical
    # corrupt gammatune+'s stream at a known token position
    gp = synthetic_session("gammatune+")
    steps = [e for e in gp if isinstance(e, StepEvent)]
    position = sum(len(s.emitted) for s in steps[:3]) + 1
    bad = MethodRun.from_events(_with_token(gp, 3, 1, 99999))
    result = check_lossless(runs + [bad])
    assert result.checked and not result.identical
    assert result.position == position and result.method == "gammatune+" and result.reference == "specdecode"
    assert "gammatune+" in result.message and str(position) in result.message


def test_lossless_flags_different_lengths():
    short = MethodRun.from_events(synthetic_session("gammatune", max_new_tokens=20))
    full = MethodRun.from_events(synthetic_session("specdecode", max_new_tokens=30))
    r = check_lossless([full, short])
    assert not r.identical and r.position == 20


def test_lossless_not_checked_when_sampling():
    runs = [MethodRun.from_events(synthetic_session(m, sampling=SamplingConfig(temperature=0.7)))
            for m in ("specdecode", "gammatune")]
    r = check_lossless(runs)
    assert not r.checked and "sampling" in r.message


def test_stop_skips_remaining_methods():
    calls = []
    runner = _job(["specdecode", "gammatune"], factory=_factory(calls), warmup_tokens=0)
    seen = []
    for label, ev in runner.stream():
        seen.append(label)
        if isinstance(ev, StepEvent) and ev.step == 2:
            runner.stop()
    assert set(seen) == {"specdecode"}
    assert len(calls) == 1


def test_runs_from_compare_recording(tmp_path):
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as w:
        for m in ("specdecode", "gammatune+"):
            w.write_all(synthetic_session(m))
    runs = runs_from_recording(read_recording(path))
    assert [r.label for r in runs] == ["specdecode", "gammatune+"]
    assert isinstance(runs[0].events[0], SessionHeader)
