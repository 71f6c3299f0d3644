"""`gammatune models`: the demo row names its two models as `run` does, not one long path with a blank draft.

Seen at 80 columns in tmux: the demo row's model column held the package's
absolute folder (widening the table's first part) and nothing for the draft.
"""

from __future__ import annotations

from clihelpers import invoke


def test_the_demo_row_names_target_and_draft(capsys):
    code, out, err = invoke(["models"], capsys)
    assert code == 0, err
    demo = [line for line in out.splitlines() if line.strip().startswith("demo ")]
    assert demo and "demo/target" in demo[0]
    lines = out.splitlines()
    nxt = lines[lines.index(demo[0]) + 1]
    assert "draft" in nxt and "demo/draft" in nxt
    assert "embedded in the package" in out
