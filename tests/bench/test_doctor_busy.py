"""Doctor says when its verdict is unsafe: a busy machine, or timing passes that disagree."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gammatune_tui.bench.doctor import busy
from gammatune_tui.cli import main


def _report(predicted, spread):
    return SimpleNamespace(examined=True, predicted=predicted, predicted_spread=spread)


def test_a_quiet_machine_with_steady_passes_gives_no_warning():
    assert busy.busy_reasons([_report(1.38, 0.06)], [0.4, 0.6], cores=2) == []
    assert busy.busy_warning([]) is None


def test_load_above_the_cores_or_passes_apart_make_the_verdict_unsafe():
    reasons = busy.busy_reasons([_report(0.95, 0.28)], [5.1, 4.8], cores=2)
    assert len(reasons) == 2 and "load average 5.1 on 2" in reasons[0] and "±29%" in reasons[1]
    assert "unsafe" in busy.busy_warning(reasons)


def test_the_warning_reaches_the_report_and_the_json(tiny_pair_dirs, tmp_path, capsys, monkeypatch):
    t, d = tiny_pair_dirs
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"id": "a", "turns": ["def add(a, b):"]}\n')
    monkeypatch.setattr(busy.os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    out_json = tmp_path / "d.json"
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--target", str(t), "--draft", str(d), "--self-drafts", "none", "--prompts", str(prompts),
              "-n", "8", "--gammas", "1,2", "--device", "cpu", "--threads", "1", "--json", str(out_json)])
    out = " ".join(capsys.readouterr().out.split())
    assert exc.value.code == 0
    assert "verdict is unsafe" in out and "load average 64.0" in out
    assert any("load average" in r for r in json.loads(out_json.read_text())["config"]["unsafe_because"])
