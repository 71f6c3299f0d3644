"""Compare and replay on the real engine with a tiny random-weight pair (no downloads, seconds)."""

from __future__ import annotations

import pytest

from gammatune_tui.cli import main
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.errors import ContextTooLong
from gammatune_tui.session.compare import runs_from_recording, summarize
from gammatune_tui.session.compare_job import CompareJob, engine_factory, plain_factory
from gammatune_tui.session.recording import read_recording
from gammatune_tui.session.replay import ReplaySource
from gammatune_tui.session.stats import stats_of

METHODS3 = ["specdecode", "hf-heuristic", "gammatune+"]


def test_greedy_compare_on_engine_is_lossless_and_replays_identically(tiny_pair, tmp_path):
    path = tmp_path / "cmp.jsonl"
    runner = CompareJob(METHODS3, PolicySettings.build("gammatune+", 4), SamplingConfig(temperature=0.0, seed=0),
                        "hello world", 24, raw=True, factory=engine_factory(tiny_pair), record=path, warmup_tokens=2,
                        repeats=2)
    summary = runner.run()
    assert summary.lossless.checked and summary.lossless.identical, summary.lossless.message
    assert len({tuple(r.token_ids) for r in runner.runs}) == 1 and runner.runs[0].token_ids
    assert [r.method for r in runner.runs] == METHODS3
    # record -> replay: every run of every round, in the order measured; the replay shows the same runs
    rec = read_recording(path)
    assert [s.header.label for s in rec.sessions] == METHODS3 * 2
    src = ReplaySource(rec, speed=0)
    for run in [runner.measured[m][0] for m in METHODS3]:
        replayed = list(src.events(None))
        assert [e.to_json() for e in replayed] == [e.to_json() for e in run.events]
        a, b = stats_of(run.events), stats_of(replayed)
        assert (a.tokens, a.steps, a.acceptance_rate, a.tokens_per_s) == (b.tokens, b.steps, b.acceptance_rate,
                                                                          b.tokens_per_s)
    again = runs_from_recording(rec)
    assert [r.label for r in again] == METHODS3
    assert [r.speeds for r in again] == [r.speeds for r in runner.runs]
    assert summarize(again).rows == summary.rows


def test_compare_measures_target_only_and_checks_every_method_against_it(tiny_pair):
    prompt = "hello world"
    ids = tiny_pair.encode_prompt(prompt, raw=True)
    runner = CompareJob(["specdecode", "gammatune+"], PolicySettings.build("gammatune+", 4),
                        SamplingConfig(temperature=0.0, seed=0), prompt, 20, raw=True,
                        factory=engine_factory(tiny_pair), plain=plain_factory(tiny_pair, ids), warmup_tokens=0,
                        repeats=2)
    summary = runner.run()
    ref = summary.row("target-only")
    assert ref.reference and ref.runs == 2 and ref.tokens == 20 and ref.draft_calls == 0
    assert ref.low <= ref.tokens_per_s <= ref.high
    assert summary.lossless.identical and summary.lossless.reference == "target-only"
    assert list(runner.reference.token_ids) == runner.runs[0].token_ids   # the target's own greedy text
    for row in summary.methods:
        assert row.over_plain == pytest.approx(row.tokens_per_s / ref.tokens_per_s)


def test_compare_refuses_a_prompt_that_does_not_fit_the_context(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    job = CompareJob(["specdecode", "gammatune+"], PolicySettings(), SamplingConfig(temperature=0.0), "hi", 5000,
                     raw=True, load_kwargs={"target": str(t), "draft": str(d), "device": "cpu", "threads": 1})
    with pytest.raises(ContextTooLong, match="1,024-token context"):
        job.prepare()


def test_compare_cli_print_records_and_replays(tiny_pair_dirs, tmp_path, capsys):
    t, d = tiny_pair_dirs
    rec = tmp_path / "c.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["compare", "def f(x):", "--methods", "specdecode,gammatune", "--target", str(t), "--draft", str(d),
              "--device", "cpu", "--temperature", "0", "-n", "16", "--raw", "--record", str(rec), "--print"])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert "ranked by tokens/s (median of 3 runs)" in out and "lossless" in out and "target-only" in out
    assert [s.header.label for s in read_recording(rec).sessions] == ["specdecode", "gammatune"] * 3
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(rec), "--print"])
    out2, err2 = capsys.readouterr()
    assert exc.value.code == 0, err2
    assert "ranked by tokens/s (median of 3 runs)" in out2   # the recording keeps every run


@pytest.mark.parametrize("argv, msg", [
    (["compare", "x", "--methods", "specdecode"], "2 to 12"),
    (["compare", "x", "--methods", "specdecode,bogus"], "unknown method"),
    (["compare", "x", "--eta", "2"], "eta"),
    (["compare", "x", "--method", "specdecode"], "use --methods (e.g. --methods gammatune+,specdecode)"),
    (["compare", "x", "--method", "adaptive-k"], "--methods specdecode,adaptive-k"),
    (["compare", "x", "--repeats", "0"], "--repeats"),
    (["compare", "x", "-n", "0"], "--max-new-tokens"),
])
def test_compare_cli_refuses_bad_options_in_one_line(argv, msg, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--print"])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and msg in err and len(err.strip().splitlines()) == 1
