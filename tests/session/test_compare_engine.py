"""Compare and replay on the real engine with a tiny random-weight pair (no downloads, seconds)."""

from __future__ import annotations

import pytest

from gammatune_tui.cli import main
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.sampling import SamplingConfig
from gammatune_tui.session.compare_job import CompareJob, engine_factory
from gammatune_tui.session.recording import read_recording
from gammatune_tui.session.replay import ReplaySource
from gammatune_tui.session.stats import stats_of

METHODS3 = ["specdecode", "hf-heuristic", "gammatune+"]


def test_greedy_compare_on_engine_is_lossless_and_replays_identically(tiny_pair, tmp_path):
    path = tmp_path / "cmp.jsonl"
    runner = CompareJob(METHODS3, PolicySettings.build("gammatune+", 4), SamplingConfig(temperature=0.0, seed=0),
                        "hello world", 24, raw=True, factory=engine_factory(tiny_pair), record=path, warmup_tokens=2)
    summary = runner.run()
    assert summary.lossless.checked and summary.lossless.identical, summary.lossless.message
    assert len({tuple(r.token_ids) for r in runner.runs}) == 1 and runner.runs[0].token_ids
    assert [r.method for r in runner.runs] == METHODS3
    # record -> replay: same events, same transcript, same stats, per method
    rec = read_recording(path)
    assert [s.header.label for s in rec.sessions] == METHODS3
    src = ReplaySource(rec, speed=0)
    for run in runner.runs:
        replayed = list(src.events(None))
        assert [e.to_json() for e in replayed] == [e.to_json() for e in run.events]
        a, b = stats_of(run.events), stats_of(replayed)
        assert (a.tokens, a.steps, a.acceptance_rate, a.tokens_per_s) == (b.tokens, b.steps, b.acceptance_rate,
                                                                          b.tokens_per_s)


def test_compare_cli_print_records_and_replays(tiny_pair_dirs, tmp_path, capsys):
    t, d = tiny_pair_dirs
    rec = tmp_path / "c.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["compare", "def f(x):", "--methods", "specdecode,gammatune", "--target", str(t), "--draft", str(d),
              "--device", "cpu", "--temperature", "0", "-n", "16", "--raw", "--record", str(rec), "--print"])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert "ranked by tokens/s" in out and "lossless" in out
    assert [s.header.label for s in read_recording(rec).sessions] == ["specdecode", "gammatune"]
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(rec), "--print"])
    out2, err2 = capsys.readouterr()
    assert exc.value.code == 0, err2
    assert "ranked by tokens/s" in out2


@pytest.mark.parametrize("argv, msg", [
    (["compare", "x", "--methods", "specdecode"], "2 to 6"),
    (["compare", "x", "--methods", "specdecode,bogus"], "unknown method"),
    (["compare", "x", "--eta", "2"], "eta"),
])
def test_compare_cli_refuses_bad_options_in_one_line(argv, msg, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--print"])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and msg in err and len(err.strip().splitlines()) == 1
