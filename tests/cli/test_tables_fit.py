"""No value is cut at 80 columns or in a pipe: bench's, doctor's, models' and compare's tables (issue 17 row 4)."""

from __future__ import annotations

import io
import json

import pytest
from rich.table import Table

from clihelpers import invoke
from gammatune_tui.render.table_fit import FittingConsole, fit_table


def _console(width: int) -> FittingConsole:
    return FittingConsole(file=io.StringIO(), width=width, record=True, highlight=False, markup=False, color_system=None,
                          force_terminal=True)   # a terminal of that width (a pipe keeps prose on one line)


def _printed(console: FittingConsole) -> str:
    return console.export_text()


def _wide_table(extra_column: str | None = None) -> tuple[Table, list[str]]:
    """Like bench's Table 2 with a spread and a share of the oracle, plus a long model name."""
    t = Table(title="Table 2: speedup over specdecode (mean ± std across γ0) — meta-llama/Llama-3.1-70B-Instruct")
    cols = ["method", "× specdecode", "× target-only", "share of oracle", "paper (avg of 4 pairs)", "model"]
    if extra_column:
        cols.append(extra_column)
    for c in cols:
        t.add_column(c, no_wrap=True, justify="left" if c in ("method", "model") else "right")
    values = []
    for m in ("specdecode", "assistant-threshold", "gammatune+"):
        row = [m, "1.23 ± 0.04×", "1.52 ± 0.11×", "0.87 ± 0.02", "1.16 ± 0.03×", "meta-llama/Llama-3.1-8B-Instruct"]
        if extra_column:
            row.append("0.93 ± 0.05×")
        t.add_row(*row)
        values += row
    return t, values


@pytest.mark.parametrize("extra", [None, "× target, verified live"])
@pytest.mark.parametrize("width", [80, 60])
def test_a_wide_table_is_split_not_cut(width, extra):
    table, values = _wide_table(extra)
    console = _console(width)
    console.print(table)
    text = _printed(console)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    for v in values:
        assert v in text, v
    for row in ("assistant-threshold", "gammatune+"):   # the key column is in every part
        assert text.count(row) == len(fit_table(console, table))


def test_a_table_that_fits_is_printed_unchanged():
    table, _ = _wide_table()
    assert fit_table(_console(300), table) == [table]


def test_one_cell_wider_than_the_screen_folds_instead_of_being_cut():
    t = Table(title="models")
    t.add_column("pair", no_wrap=True)
    t.add_column("model", no_wrap=True)
    long = "organisation/" + "x" * 90
    t.add_row("mine", long)
    console = _console(80)
    console.print(t)
    text = _printed(console)
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    assert long in "".join(line.strip() for line in text.splitlines())


def test_models_at_80_columns_shows_every_model_id_in_full(capsys, monkeypatch):
    from gammatune_tui.commands import models as models_cmd
    from gammatune_tui.engine.loading.presets import PRESETS
    from gammatune_tui.render.console import make_console

    monkeypatch.setattr(models_cmd, "make_console", lambda: make_console(width=80))
    code, out, err = invoke(["models"], capsys)
    assert code == 0, err
    lines = [line for line in out.splitlines() if not line.startswith("cached:")]
    assert "…" not in out.replace("gammatune … --pair", "") and all(len(line) <= 80 for line in lines)
    for p in PRESETS.values():
        assert p.target in out and (p.draft or p.drafter or "prompt lookup") in out and p.target_size in out   # smollm2: no draft model


def test_compare_summary_at_80_columns_keeps_every_column():
    from gammatune_tui.engine.policies import METHODS
    from gammatune_tui.render.tables import summary_table
    from gammatune_tui.session.compare import MethodRun, Reference, summarize
    from gammatune_tui.session.synthetic import synthetic_session

    runs = []
    for i, m in enumerate(METHODS):
        run = MethodRun.from_events(synthetic_session(m, seed=1))
        run.repeats = [100.0 + i, 104.0 + i, 108.0 + i]
        runs.append(run)
    console = _console(80)
    console.print(summary_table(summarize(runs, Reference((80.0, 82.0, 81.0), 75))))
    text = _printed(console)
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    for header in ("tok/s", "spread", "× target", "× specdecode", "α", "tok/step", "calls t/d"):
        assert all(word in text for word in header.split()), header   # a header may wrap between its words
    import re
    # every method's calls t/d cell (and target-only's), in whichever part of a split table holds that column
    assert len(re.findall(r"\b\d+/\d+\b", text)) >= len(METHODS) + 1
    for m in METHODS:
        assert m in text


def test_bench_table2_in_a_pipe_keeps_the_spread_and_the_share_of_the_oracle(capsys):
    from gammatune_tui.bench.report.tables import Speedup, render_table2

    t2 = {m: Speedup(1.0 + i / 10, 0.01 * (i + 1)) for i, m in enumerate(
        ["specdecode", "hf-heuristic", "assistant-threshold", "gammatune", "gammatune+", "adaptive-k", "oracle"])}
    console = _console(80)
    console.print(render_table2(t2, t2, "demo/target / demo/draft"))
    text = _printed(console)
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    for m, s in t2.items():
        assert m in text and str(s) in text
