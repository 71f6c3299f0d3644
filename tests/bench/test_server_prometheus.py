"""`doctor --server-log` on a scrape of vLLM's Prometheus /metrics (issue 43 item 1): one scrape, or two whose
difference is the window; what the format lacks said in a line; a damaged scrape is one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from gammatune_tui.bench.deploy.server_log import predictions, read
from gammatune_tui.bench.sim.cost_model import CostModel
from gammatune_tui.cli import main
from server_log_cases import assert_refused

SCRAPE = (Path(__file__).parent / "fixtures" / "vllm-metrics.prom").read_text()
FLAT = CostModel(draft_token_s=1.0, verify_s={1: 10.0})


def _scaled(factor: float) -> str:
    """The fixture with every counter multiplied: a later scrape of the same server."""
    out = []
    for line in SCRAPE.splitlines():
        if line.startswith("#"):
            out.append(line)
            continue
        head, value = line.rsplit(" ", 1)
        out.append(f"{head} {float(value) * factor}")
    return "\n".join(out) + "\n"


def test_one_scrape_reads_the_counters_since_the_servers_start(tmp_path):
    f = tmp_path / "metrics.txt"
    f.write_text(SCRAPE)
    log = read(f)
    assert (log.engine, log.k, log.steps, log.drafted, log.accepted, log.requests) == ("vLLM", 4, 1000, 4000, 2400, 48)
    assert log.survival == [0.9, 0.7, 0.5, 0.3] and log.per_step is None
    assert log.mean_acceptance_length == pytest.approx(3.4)
    assert any("no per-step arrays" in n for n in log.notes or [])
    assert [w.k for w in predictions(log, FLAT)] == [1, 2, 3, 4]


def test_two_scrapes_read_the_window_between_them(tmp_path):
    f = tmp_path / "two.txt"
    f.write_text(SCRAPE + _scaled(3.0))   # the second scrape: 3× every count, so the window holds 2× the first
    log = read(f)
    assert (log.steps, log.drafted, log.accepted, log.requests) == (2000, 8000, 4800, 96)
    assert log.survival == [0.9, 0.7, 0.5, 0.3]
    assert any("two scrapes" in n for n in log.notes or [])


def test_doctor_prints_the_servers_acceptance_and_the_windows(tmp_path, capsys):
    f = tmp_path / "metrics.txt"
    f.write_text(SCRAPE)
    with pytest.raises(SystemExit) as done:
        main(["doctor", "--server-log", str(f), "--costs", "2,20"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert "vLLM log" in out and "48 request(s), 1000 steps, K = 4" in out and "0.90 0.70 0.50 0.30" in out


BAD = {
    "restart between scrapes": (SCRAPE + _scaled(0.5), "went down between the scrapes"),
    "three scrapes": (SCRAPE * 3, "appears three times"),
    "no per-position series": ("\n".join(ln for ln in SCRAPE.splitlines() if "per_pos" not in ln),
                               "num_accepted_tokens_per_pos_total is missing"),
    "a position missing": ("\n".join(ln for ln in SCRAPE.splitlines() if 'position="1"' not in ln),
                           "lacks position 1"),
    "accepted counter missing": ("\n".join(ln for ln in SCRAPE.splitlines()
                                           if not ln.startswith("vllm:spec_decode_num_accepted_tokens_total")),
                                 "vllm:spec_decode_num_accepted_tokens_total is missing"),
    "not a number": (SCRAPE.replace("} 4000.0", "} many"), "not a number"),
    "negative": (SCRAPE.replace("} 4000.0", "} -4000.0"), "a finite count"),
    "nan": (SCRAPE.replace("} 2400.0", "} NaN"), "a finite count"),
    "zero drafts": (SCRAPE.replace("} 1000.0", "} 0.0"), "no speculative step"),
    "not a prefix": (SCRAPE.replace('position="3"} 300.0', 'position="3"} 800.0'), "not a prefix count"),
    "per-position sum off": (SCRAPE.replace("} 2400.0", "} 2000.0"), "sums to 2400"),
    "broken sample line": (SCRAPE.replace('{engine="0",model_name="Qwen/Qwen3-8B"} 4000.0', "{engine= 4000"),
                           "not a Prometheus sample"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_damaged_scrape_is_one_line_naming_what_and_exit_2(tmp_path, capsys, name):
    content, needle = BAD[name]
    assert_refused(tmp_path / "metrics.txt", content, needle, capsys)
