"""What the commands print reads as plain English (issue 24 row 14).

"stopped: stopped" in `replay --print`, "recorded 1 traces", and a bench
summary naming the same γ0 as best and worst when only one γ0 ran.
"""

from __future__ import annotations

import dataclasses

from clihelpers import invoke

from gammatune_tui.engine.events import SessionSummary
from gammatune_tui.session.recording import RecordingWriter
from gammatune_tui.session.synthetic import synthetic_session


def _recording(path, reason):
    events = [dataclasses.replace(e, stop_reason=reason) if isinstance(e, SessionSummary) else e
              for e in synthetic_session("gammatune+")]
    with RecordingWriter(path) as w:
        w.write_all(events)
    return path


def test_replay_print_says_why_it_stopped_in_words(tmp_path, capsys):
    for reason, words in (("stopped", "stopped by you"), ("max_new_tokens", "reached the token limit"),
                          ("eos", "the model ended its answer")):
        code, out, err = invoke(["replay", str(_recording(tmp_path / f"{reason}.jsonl", reason)), "--print"], capsys)
        assert code == 0, err
        assert words in out and "stopped: " not in out


def test_one_trace_and_one_gamma_read_as_one(capsys, pair_args, monkeypatch, tmp_path):
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = invoke(["bench", *pair_args, "--simulate", "--check-live", "0", "--methods",
                             "specdecode,gammatune+", "--gammas", "1", "-n", "8", "--limit", "1",
                             "--out", str(tmp_path / "b.json")], capsys)
    assert code == 0, err
    flat = " ".join(err.split())
    assert "recorded 1 trace and the cost model" in flat and "1 traces" not in flat
    text = " ".join(out.split())
    assert "Throughput (one γ0 per method)" in text
    assert "best γ0" not in text and "worst γ0" not in text


def test_a_method_at_one_gamma_among_several_has_no_worst():
    from rich.console import Console

    from gammatune_tui.bench.report.tables import render_summary

    console = Console(width=200, record=True)
    console.print(render_summary({"specdecode": {1: 369.0, 4: 400.0}, "gammatune+": {1: 369.0}}))
    rows = {line.split("│")[1].strip(): line for line in console.export_text().splitlines() if "│" in line}
    assert "4 (400)" in rows["specdecode"] and "1 (369)" in rows["specdecode"]
    assert "1 (369), only" in rows["gammatune+"] and rows["gammatune+"].count("369") == 2   # mean and best, no worst
