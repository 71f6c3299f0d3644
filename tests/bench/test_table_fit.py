"""Benchmark tables at the width they are printed at: nothing cut at 80 columns, columns split when needed."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from gammatune_tui.bench.live.latency import LatencyRow
from gammatune_tui.bench.modes.latency import latency_columns
from gammatune_tui.bench.report.columns import Column, fit_tables, human_count
from gammatune_tui.cli import main


def _render(columns, width, title="Table 1"):
    buf = io.StringIO()
    console = Console(width=width, file=buf)
    tables = fit_tables(title, columns, width, "a caption")
    for t in tables:
        console.print(t)
    return tables, buf.getvalue()


ROWS = [LatencyRow("Llama-3.1-70B", 70_553_706_496, "cpu", "float32", 128, 925.1,
                   {1: 900.0, 2: 950.2, 4: 1000.3, 8: 1200.0, 16: 1500.5}),
        LatencyRow("Llama-3.2-1B", 1_235_814_400, "cpu", "float32", 128, skipped="does not fit")]


@pytest.mark.parametrize("width", [160, 100, 80, 50])
def test_latency_table_never_cuts_a_cell(width):
    tables, text = _render(latency_columns(ROWS, [1, 2, 4, 8, 16]), width)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    for cell in ("Llama-3.1-70B", "70.6B", "1.2B", "925.10", "1500.50", "1000.30", "925.05", "skipped"):
        assert cell in text, (width, cell)
    if len(tables) > 1:   # split: the key column is in every part, the short headers explained once
        assert text.count("Llama-3.1-70B") == len(tables) and "v16 = verify 16" in " ".join(text.split())


def test_runner_and_bandwidth_columns_appear_when_the_rows_have_them():
    rows = [LatencyRow("vicuna-68m", 68_000_000, "cuda", "bfloat16", 128, 1.2, {1: 1.3, 2: 1.4}, runner=r,
                       decode_gbs=95.5, bandwidth_pct=3.2) for r in ("eager", "graphs")]
    tables, text = _render(latency_columns(rows, [1, 2]), 80)
    assert "eager" in text and "graphs" in text and "95.5" in text and "3%" in text
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())


def test_more_columns_still_fit_by_splitting():
    cols = latency_columns(ROWS, [1, 2, 4, 8, 16])
    cols += [Column(f"runner {name} ms/token", ["12.34", "—"], short=name) for name in ("eager", "static", "graphs")]
    tables, text = _render(cols, 80)
    assert len(tables) >= 2 and "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    assert "graphs" in text


def test_human_count():
    assert [human_count(n) for n in (950, 68_000_000, 1_235_814_400, 70_553_706_496)] == ["950", "68M", "1.2B", "70.6B"]


def test_bench_refuses_prompts_past_the_context_before_running(tiny_pair_dirs, tmp_path, capsys):
    t, d = tiny_pair_dirs
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "short", "turns": ["def f():"]}\n{"id": "long", "turns": ["' + "x" * 1100 + '"]}\n')
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--simulate", "--target", str(t), "--draft", str(d), "--device", "cpu", "--prompts",
              str(prompts), "-n", "8", "--raw", "-o", str(tmp_path / "b.json")])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert exc.value.code == 2 and len(lines) == 1, err
    assert "prompt long:" in lines[0] and "1,024-token context" in lines[0]
    assert not (tmp_path / "b.json").exists()
