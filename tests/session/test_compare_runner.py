"""Compare: method parsing, the job (each method alone, same settings), summary and lossless check."""

from __future__ import annotations

import dataclasses

import pytest

from gammatune_tui.engine.events import SessionHeader, StepEvent
from gammatune_tui.engine.policies import METHODS, PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.session.compare import MethodRun, Reference, check_lossless, runs_from_recording, summarize
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
    ("specdecode", r"needs 2 to 12 methods, got 1 \(specdecode\); choose from"),
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
                  record=path, warmup_tokens=4, repeats=1)
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
    assert not summary.ranked and all(r.rank is None for r in summary.rows)   # one run: no spread, no ranking


def test_repeats_run_in_interleaved_rounds_and_show_the_median_run(tmp_path):
    calls, progress, done = [], [], []
    path = tmp_path / "r.jsonl"
    runner = _job(["specdecode", "gammatune+"], factory=_factory(calls), record=path, warmup_tokens=0, repeats=3)
    summary = runner.run(lambda *a: progress.append(a), done.append)
    assert [c[2] for c in calls] == ["specdecode", "gammatune+"] * 3       # round by round, not method by method
    assert [p[2] for p in progress if p[3] == 0 and p[0] < p[1]] == [
        f"{m} (run {r}/3)" for r in (1, 2, 3) for m in ("specdecode", "gammatune+")]
    assert [s.header.label for s in read_recording(path).sessions] == ["specdecode", "gammatune+"] * 3
    assert [r.label for r in done] == ["specdecode", "gammatune+"]       # each once, when its last run is in
    for run in runner.runs:
        speeds = [r.stats.tokens_per_s for r in runner.measured[run.label]]
        assert sorted(run.speeds) == sorted(speeds) and len(speeds) == 3
        assert run.stats.tokens_per_s == sorted(speeds)[1]                  # the shown stream is the median run
        row = summary.row(run.label)
        assert (row.low, row.tokens_per_s, row.high, row.runs) == (min(speeds), sorted(speeds)[1], max(speeds), 3)
    assert summary.ranked and summary.runs == 3


def _with_speeds(label, speeds):
    run = MethodRun.from_events(synthetic_session(label, seed=1))
    run.repeats = list(speeds)
    return run


def test_ranks_only_beyond_the_spread():
    runs = [_with_speeds("specdecode", [100, 104, 108]), _with_speeds("gammatune", [106, 110, 115]),
            _with_speeds("gammatune+", [120, 125, 130]), _with_speeds("hf-heuristic", [60, 61, 62])]
    s = summarize(runs, Reference((80.0, 82.0, 81.0), 30))
    by = {r.label: r for r in s.rows}
    assert [r.label for r in s.rows] == ["gammatune+", "gammatune", "specdecode", "target-only", "hf-heuristic"]
    # gammatune+'s slowest run (120) beats everyone's fastest: alone first
    assert by["gammatune+"].rank == 1 and not by["gammatune+"].tied
    # gammatune (106-115) and specdecode (100-108) overlap: neither is ranked above the other
    assert by["gammatune"].rank == by["specdecode"].rank == 2 and by["gammatune"].tied and by["specdecode"].tied
    assert by["target-only"].rank == 4 and by["hf-heuristic"].rank == 5
    assert by["gammatune+"].over_plain == pytest.approx(125 / 81) and by["target-only"].over_plain == 1.0
    assert by["gammatune+"].speedup == pytest.approx(125 / 104)
    assert [r.label for r in s.leaders] == ["gammatune+"]
    text = plain_table(s)
    assert "1 " in text and "2=" in text and "80.0–82.0" in text and "× target" in text


def plain_table(summary, width=150):
    from rich.console import Console

    from gammatune_tui.render.tables import summary_table

    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(summary_table(summary, width))
    return console.export_text()


def test_summary_table_fits_80_columns_by_dropping_optional_columns():
    runs = [_with_speeds(m, [100 + i, 104 + i, 108 + i]) for i, m in enumerate(METHODS)]
    s = summarize(runs, Reference((80.0, 82.0, 81.0), 75))
    wide, narrow = plain_table(s, 150), plain_table(s, 80)
    assert "calls t/d" in wide and "tok/step" in wide
    assert all(len(line) <= 80 for line in narrow.splitlines())
    assert "…" not in narrow and "assistant-threshold" in narrow and "× target" in narrow and "spread" in narrow
    # what the narrow table leaves out is said under it (issue 24: the calls column went without a word)
    said = " ".join(narrow.split())
    assert "calls t/d" not in narrow.split("left out")[0]
    assert "left out at this width: calls t/d" in said and "compare --print" in said
    assert "left out" not in wide


def test_summary_numbers_equal_each_methods_own_stats():
    runs = [MethodRun.from_events(synthetic_session(m, seed=1)) for m in METHODS]
    summary = summarize(runs)
    assert [r.tokens_per_s for r in summary.rows] == sorted((r.tokens_per_s for r in summary.rows), reverse=True)
    assert [r.rank for r in summary.rows] == [None] * len(METHODS)
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


def test_ranks_are_printed_in_order_when_a_noisy_method_overlaps_two_others():
    """A beats B clearly; C's wide spread overlaps both, so C shares rank 1 with A although its median is below B's.

    Sorted by median alone the table read 1=, 2, 1= ("2" above "1="); ranks go down the table in order.
    """
    runs = [_with_speeds("specdecode", [100, 110, 120]), _with_speeds("gammatune", [90, 95, 99]),
            _with_speeds("gammatune+", [60, 80, 115])]
    s = summarize(runs)
    assert [(r.label, r.rank, r.tied) for r in s.rows] == [
        ("specdecode", 1, True), ("gammatune+", 1, True), ("gammatune", 2, False)]
    ranks = [line.split()[0] for line in plain_table(s).splitlines() if line.split()[:1] in (["1="], ["2"])]
    assert ranks == ["1=", "1=", "2"]


def _sampled(label, speeds, temperature):
    """A run whose header says it decoded at `temperature`."""
    import dataclasses

    run = _with_speeds(label, speeds)
    h = run.stats.header
    run.stats.header = dataclasses.replace(h, sampling={**h.sampling, "temperature": temperature})
    return run


def test_a_race_where_speculation_does_not_pay_says_why():
    """Issue 17 row 11: at the demo's T = 0.7 every method can land within target-only's spread."""
    from gammatune_tui.render.tables import backfire_text, verdict
    from gammatune_tui.session.compare import backfire

    tied = summarize([_sampled("specdecode", [60, 70, 80], 0.7), _sampled("costaware", [65, 75, 90], 0.7)],
                     Reference((62.0, 71.0, 78.0), 30))
    note = backfire(tied)
    assert note and "no method is clearly faster than target-only" in note and "-t 0" in note
    assert "no method clearly faster than target-only" in verdict(tied) and backfire_text(tied) is not None
    paying = summarize([_with_speeds("specdecode", [90, 95, 99]), _with_speeds("costaware", [60, 70, 80])],
                       Reference((62.0, 71.0, 78.0), 30))
    assert backfire(paying) is None and backfire_text(paying) is None
    assert backfire(summarize([_with_speeds("specdecode", [60, 70, 80])])) is None  # no target-only row: no claim


def test_a_greedy_race_that_does_not_pay_does_not_blame_sampling():
    """Seen with `compare -t 0` on a busy machine: the backfire line blamed temperature > 0 and advised -t 0."""
    from gammatune_tui.session.compare import backfire

    tied = summarize([_sampled("specdecode", [60, 70, 80], 0.0), _sampled("costaware", [65, 75, 90], 0.0)],
                     Reference((62.0, 71.0, 78.0), 30))
    note = backfire(tied)
    assert note and "no method is clearly faster than target-only" in note
    assert "-t 0" not in note and "temperature > 0" not in note and "gammatune doctor" in note
