"""The bench's ETA counts down between runs instead of freezing until the next one finishes."""

from __future__ import annotations

from types import SimpleNamespace

from gammatune_tui.bench.modes import common


def test_the_eta_counts_down_between_updates_and_corrects_at_each(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(common.time, "monotonic", lambda: now[0])
    col = common.CountdownColumn()
    task = SimpleNamespace(id=1, total=10, completed=0)
    assert col.render(task).plain == "-:--:--"
    now[0] += 60.0
    task.completed = 1                              # one run in 60 s, nine left: 9 minutes
    assert col.render(task).plain == "0:09:00"
    now[0] += 30.0                                  # no run finished: the clock keeps counting down
    assert col.render(task).plain == "0:08:30"
    now[0] += 30.0
    task.completed = 4                              # three more in 30 s: 4 in 120 s, six left → 3 minutes
    assert col.render(task).plain == "0:03:00"
    now[0] += 500.0
    assert col.render(task).plain == "0:00:00"      # never below zero


def test_items_done_before_the_run_do_not_count_as_its_speed(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(common.time, "monotonic", lambda: now[0])
    col = common.CountdownColumn()
    task = SimpleNamespace(id=7, total=30, completed=20)   # 20 traces resumed from an interrupted run
    assert col.render(task).plain == "-:--:--"
    now[0] += 10.0
    task.completed = 21
    assert col.render(task).plain == "0:01:30"      # 10 s per trace, 9 left
