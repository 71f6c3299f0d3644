"""Table 2 arithmetic (docs/spec.md §5) on a hand-made result set, and the files the report writes."""

from __future__ import annotations

import csv
import json
import math

import pytest
from rich.console import Console

from gammatune_tui.bench.report.files import write_csv, write_json
from gammatune_tui.bench.report.tables import bar, engine_vs_hf, print_report, render_bars, speedups_over, table2
from gammatune_tui.bench.results import HF_HEURISTIC, PLAIN, RunRecord, aggregate, throughputs


def _records() -> list[RunRecord]:
    """Two prompts per cell; each cell's throughput is Σtokens / Σseconds."""
    tput = {
        "specdecode": {1: 100.0, 2: 150.0, 4: 50.0},
        "gammatune": {1: 120.0, 2: 120.0, 4: 120.0},
        "gammatune+": {1: 110.0, 2: 130.0, 4: 120.0},
        "hf-heuristic": {1: 90.0, 2: 100.0, 4: 110.0},
        HF_HEURISTIC: {1: 60.0, 2: 50.0, 4: 110.0},
    }
    out = []
    for m, by_g in tput.items():
        for g, v in by_g.items():
            # prompt a: 30 tokens, prompt b: 70 tokens; split seconds unevenly, sum = 100 / v
            out.append(RunRecord(m, g, "a", tokens=30, steps=10, drafted=20, accepted=15, wall_s=0.25 * 100 / v,
                                 pos_drafted=[10, 10], pos_accepted=[9, 6]))
            out.append(RunRecord(m, g, "b", tokens=70, steps=30, drafted=40, accepted=20, wall_s=0.75 * 100 / v,
                                 pos_drafted=[30, 10], pos_accepted=[15, 5]))
    out.append(RunRecord(PLAIN, None, "a", tokens=40, steps=40, wall_s=0.5))
    out.append(RunRecord(PLAIN, None, "b", tokens=40, steps=40, wall_s=0.5))  # 80 tok/s
    return out


def test_cells_sum_over_prompts():
    cells = aggregate(_records())
    c = cells[("specdecode", 2)]
    assert c.runs == 2 and c.tokens == 100
    assert c.throughput == pytest.approx(150.0)
    assert c.acceptance_rate == pytest.approx(35 / 60)
    assert c.tokens_per_step == pytest.approx(100 / 40)
    assert c.per_position == pytest.approx([24 / 40, 11 / 20])
    assert cells[(PLAIN, None)].throughput == pytest.approx(80.0)


def test_table2_by_hand():
    thr = throughputs(aggregate(_records()))
    t2 = table2(thr)
    # specdecode mean over γ0 = 100: ratios 1.0, 1.5, 0.5
    assert t2["specdecode"].mean == pytest.approx(1.0)
    assert t2["specdecode"].std == pytest.approx(math.sqrt(1 / 6))  # population std (ddof = 0)
    assert t2["specdecode"].per_gamma == pytest.approx({1: 1.0, 2: 1.5, 4: 0.5})
    assert t2["gammatune"].mean == pytest.approx(1.2) and t2["gammatune"].std == pytest.approx(0.0)
    assert t2["gammatune+"].mean == pytest.approx(1.2)
    assert t2["gammatune+"].std == pytest.approx(math.sqrt(0.02 / 3))
    assert t2[PLAIN].mean == pytest.approx(0.8) and t2[PLAIN].std == 0.0
    assert str(t2["gammatune+"]) == "1.20 ± 0.08×"


def test_table2_needs_specdecode():
    with pytest.raises(ValueError):
        table2({"gammatune": {1: 1.0}})


def test_speedup_over_plain_and_engine_vs_hf():
    thr = throughputs(aggregate(_records()))
    over = speedups_over(thr, PLAIN)
    assert over["gammatune"].mean == pytest.approx(1.5)
    assert over["specdecode"].per_gamma == pytest.approx({1: 1.25, 2: 1.875, 4: 0.625})
    vs = engine_vs_hf(thr)
    # 90/60, 100/50, 110/110
    assert vs["hf-heuristic"].per_gamma == pytest.approx({1: 1.5, 2: 2.0, 4: 1.0})
    assert vs["hf-heuristic"].mean == pytest.approx(1.5)


def test_bar_eighths():
    assert bar(10, 10, 4) == "████"
    assert bar(5, 10, 4) == "██"
    assert bar(1.25, 10, 4) == "▌"
    assert bar(0, 10, 4) == ""


def test_report_prints_and_files_round_trip(tmp_path):
    cells = aggregate(_records())
    console = Console(record=True, width=140)
    derived = print_report(console, cells, [1, 2, 4], "tiny/target / tiny/draft")
    text = console.export_text()
    assert "1.20 ± 0.00×" in text and "0.80 ± 0.00×" in text
    assert derived["table2"]["gammatune"]["mean"] == pytest.approx(1.2)
    chart = render_bars(throughputs(cells)).plain
    assert chart.count("\n") == len(throughputs(cells)) + 1
    write_json(tmp_path / "r.json", {"derived": derived, "records": [r.to_json() for r in _records()]})
    back = json.loads((tmp_path / "r.json").read_text())
    assert back["derived"]["table2"]["specdecode"]["per_gamma"]["2"] == pytest.approx(1.5)
    rows = write_csv(tmp_path / "r.csv", cells, "live")
    with (tmp_path / "r.csv").open() as fh:
        got = list(csv.DictReader(fh))
    assert len(got) == len(rows) == len(cells)
    sd2 = next(r for r in got if r["method"] == "specdecode" and r["gamma0"] == "2")
    assert float(sd2["speedup_vs_specdecode"]) == pytest.approx(1.5)
    assert float(sd2["speedup_vs_target_only"]) == pytest.approx(150 / 80)
    assert sd2["share_of_oracle"] == ""  # no oracle in a live run


def test_oracle_row_and_share_of_oracle(tmp_path):
    from gammatune_tui.bench.sim.oracle import ORACLE, Regret
    from gammatune_tui.bench.report.tables import method_order, share_of_oracle

    recs = _records() + [RunRecord(ORACLE, None, "a", tokens=30, steps=5, wall_s=0.1),
                         RunRecord(ORACLE, None, "b", tokens=70, steps=10, wall_s=0.3)]  # 250 tok/s
    cells = aggregate(recs)
    thr = throughputs(cells)
    assert method_order(thr)[0] == ORACLE
    t2 = table2(thr)
    assert t2[ORACLE].mean == pytest.approx(2.5) and t2[ORACLE].per_gamma == {None: pytest.approx(2.5)}
    shares = share_of_oracle(t2)
    assert shares["gammatune"].mean == pytest.approx(120 / 250) and shares["gammatune"].std == pytest.approx(0)
    assert shares["specdecode"].per_gamma == pytest.approx({1: 0.4, 2: 0.6, 4: 0.2})
    assert speedups_over(thr, PLAIN)[ORACLE].mean == pytest.approx(250 / 80)
    console = Console(record=True, width=160)
    regret = {"gammatune": Regret("gammatune", 0.48, 0.0, {1: 0.48}, {"easy": 0.5, "hard": 0.47})}
    derived = print_report(console, cells, [1, 2, 4], "tiny", regret=regret)
    text = console.export_text()
    assert "share of oracle" in text and "0.48 ± 0.00" in text and "hard" in text
    assert text.index(ORACLE) < text.index("specdecode", text.index("Table 2"))  # the top row of Table 2
    assert derived["share_of_oracle"]["gammatune+"]["mean"] == pytest.approx(120 / 250)
    assert derived["regret"]["gammatune"]["per_category"] == {"easy": 0.5, "hard": 0.47}
    write_csv(tmp_path / "s.csv", cells, "sim")
    with (tmp_path / "s.csv").open() as fh:
        got = {(r["method"], r["gamma0"]): r for r in csv.DictReader(fh)}
    assert float(got[("gammatune", "4")]["share_of_oracle"]) == pytest.approx(0.48)
    assert float(got[(ORACLE, "")]["share_of_oracle"]) == pytest.approx(1.0)


def test_table2_draws_a_line_between_the_method_groups():
    from gammatune_tui.bench.report.tables import Speedup, render_table2

    names = ["oracle", "specdecode", "gammatune+", "adaptive-k", "ucb", "costaware", PLAIN]
    t2 = {m: Speedup(1.0, 0.0) for m in names}
    table = render_table2(t2, {}, "pair", paper=False)
    ends = [row.end_section for row in table.rows]
    # oracle | the paper's two | the peers' two | gammatune's own | target-only
    assert ends == [True, False, True, False, True, True, False]
