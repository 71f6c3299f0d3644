"""The decoder's timing pass, before and after: what each prices against live runs, and how fast.

The first `bench --simulate` on the demo pair replays shipped traces but
must time the decoder here (`trace_cache.time_decoder`), three passes. This
script times the decoder two ways, alternating them round after round so a
busy spell of the machine falls on each, and prices each timing two ways:

* **per-window, trimmed mean** (TIMING_VERSION 4, fc00842, reproduced here):
  per pass, target-only decoding, a session that never drafts and
  specdecode at every calibration window, each a session of 64 tokens; each
  window priced by the mean of the middle 60 % of its steps;
* **cycled, trimmed mean** (324fcf4): per pass, target-only decoding of 64
  tokens and one session of the answers' length that takes every
  calibration window in turn (`_Cycle`), priced as above;
* **cycled** (the product now): the same steps, each window priced by the
  mean of its steps without the busy ones (`cost_model.typical`).

Each round then runs a few cells live on full 256-token answers (specdecode
at γ0 1, 3, 8, 24, gammatune and costaware at γ0 4, and target-only, on three
prompts) and sets each timing's simulated speed of those cells beside the
live one (`check_against_live`'s sim/live ratio). Finally each timing prices
the demo pair's shipped `code` traces (30 prompts, 12 methods × 12 γ0) as
`bench --simulate` does: Table 2's means, the speed-ups over target-only and
every share of the oracle with its pass spread and rank.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/timing_agreement.py [--rounds 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def setup():
    """The demo pair, the `code` prompts as bench sends them, and their shipped traces."""
    from rich.console import Console

    from gammatune_tui.bench.live.protocol import PromptIds
    from gammatune_tui.bench.modes.shipped_traces import load_shipped
    from gammatune_tui.bench.modes.trace_cache import trace_key
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.engine.policies import PolicyParams
    from gammatune_tui.prompts import load_prompt_set

    pair = load_pair()
    pid = [PromptIds(p.id, pair.encode_prompt(p.text)) for p in load_prompt_set("code")]
    gammas = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24]
    max_window = max(max(gammas), PolicyParams.build().gamma_max)
    traces = load_shipped(Console(stderr=True), pair, pid, trace_key(pair, pid, 256), max_window)
    if traces is None:
        raise SystemExit("no shipped traces fit this checkout's demo pair")
    return pair, pid, traces, gammas, max_window


def price(traces, cost, passes, gammas) -> dict:
    """What `bench --simulate` prints from these traces under this timing (bench/modes/simulate.py's order)."""
    from gammatune_tui.bench.report.tables import PLAIN, speedups_over, table2
    from gammatune_tui.bench.results import aggregate, throughputs
    from gammatune_tui.bench.sim import oracle, reference
    from gammatune_tui.bench.sim import simulate as sim
    from gammatune_tui.bench.sim.replays import Replays
    from gammatune_tui.engine.policies import METHODS

    methods = list(METHODS)   # `bench --simulate`'s default: every method
    replays = Replays()
    records = sim.simulate_sweep(traces, methods, gammas, cost, {}, replays=replays)
    records += sim.plain_records(traces, cost=cost)
    records += [oracle.oracle_run(t, cost, 256).record for t in traces]
    thr = throughputs(aggregate(records))
    t2 = table2(thr, gammas=gammas)
    plain = speedups_over(thr, PLAIN, gammas)
    shares = reference.share_rows(traces, cost, passes, methods, gammas, {}, 256, replays=replays)
    return {
        "prices_ms": {"draft/token": cost.draft_token_s * 1e3, "draft/step": cost.draft_step_s * 1e3,
                      **{f"verify k={k}": cost.verify(k) * 1e3 for k in (1, 2, 4, 9, 25)},
                      "target-only/token": cost.plain_token_s * 1e3},
        "table2": {m: s.mean for m, s in t2.items()},
        "over_target_only": {m: s.mean for m, s in plain.items()},
        "shares": {r.name: {"share": r.share, "pass_spread": r.pass_spread, "rank": r.rank, "detail": r.detail}
                   for r in shares},
    }


def trimmed_mean(values) -> float:
    """cost_model.typical up to 324fcf4: the mean of the middle 60 % (one sample at each end from three on)."""
    v = sorted(values)
    cut = max(1, int(len(v) * 0.2)) if len(v) >= 3 else 0
    return statistics.fmean(v[cut:len(v) - cut])


def retyped(cost, models, kept: list, session_s: float):
    """The same timing's pooled and per-pass models, priced with `trimmed_mean` instead."""
    from gammatune_tui.bench.sim.cost_model import calibrate

    out = []
    for c, events in [(cost, [e for ev in kept for e in ev]), *zip(models, kept)]:
        m = calibrate(events, trimmed_mean)
        m.plain_token_s, m.session_s = c.plain_token_s, max(0.0, m.outside_s - session_s)
        out.append(m)
    return out[0], out[1:]


def per_window_timing(pair, prompt, max_window: int, trace_session_s: float, passes: int = 3, tokens: int = 64):
    """TIMING_VERSION 4's timing pass (trace_cache.py at fc00842), for the comparison: a session per window."""
    from gammatune_tui.bench.live import protocol
    from gammatune_tui.bench.modes.trace_cache import cycle_sessions
    from gammatune_tui.bench.sim.cost_model import CALIBRATION_GAMMAS, calibrate
    from gammatune_tui.engine.plain import plain_decode
    from gammatune_tui.engine.policies import PolicySettings

    sessions = ["target-only", "never-draft"] + [g for g in CALIBRATION_GAMMAS if g <= max_window]
    every: list = []
    models = []
    plain = [0.0, 0]
    for r in range(passes):
        events: list = []
        mine = [0.0, 0]
        for g in (sessions if r % 2 == 0 else sessions[::-1]):
            if g == "target-only":
                run = plain_decode(pair, prompt.ids, tokens, None)
                mine = [run.wall_s, len(run.token_ids)]
            elif g == "never-draft":
                cycle_sessions(pair, prompt, tokens, [0], events)   # one session, every step γ = 0
            else:
                protocol.run_policy(pair, PolicySettings.build("specdecode", g), prompt, tokens, keep_events=events)
        models.append(calibrate(events, trimmed_mean))
        models[-1].plain_token_s = mine[0] / mine[1]
        plain = [plain[0] + mine[0], plain[1] + mine[1]]
        every += events
    cost = calibrate(every, trimmed_mean)
    cost.plain_token_s = plain[0] / plain[1]
    for c in (cost, *models):
        c.session_s = max(0.0, c.outside_s - trace_session_s)
    return cost, models


LIVE_CELLS = [("specdecode", 1), ("specdecode", 3), ("specdecode", 8), ("specdecode", 24), ("gammatune", 4),
              ("costaware", 4)]
LIVE_PROMPTS = (0, 10, 20)


def live_runs(pair, pid, traces) -> list:
    """The live cells' events (and target-only's wall time) on full answers, once per round."""
    from gammatune_tui.bench.live import protocol
    from gammatune_tui.engine.plain import plain_decode
    from gammatune_tui.engine.policies import PolicySettings

    out = []
    for i in LIVE_PROMPTS:
        run = plain_decode(pair, pid[i].ids, 256, None)
        out.append((i, None, run.wall_s, len(run.token_ids)))
        for m, g in LIVE_CELLS:
            s = PolicySettings.build(m, g)
            events: list = []
            protocol.run_policy(pair, s, pid[i], 256, keep_events=events)
            out.append((i, s, events, None))
    return out


def against_live(runs: list, traces, cost) -> dict[str, float]:
    """sim/live speed per live cell under `cost` (target-only: the simulated row's time against the live one)."""
    from gammatune_tui.bench.sim.cost_model import target_only_s
    from gammatune_tui.bench.sim.simulate import check_against_live

    ratios: dict[str, list[float]] = {}
    for i, s, got, n in runs:
        t = traces[i]
        if s is None:
            ratios.setdefault("target-only", []).append(got / target_only_s(t, cost) * len(t.tokens) / n)
        else:
            ratios.setdefault(f"{s.method} γ0 {s.gamma0}", []).append(check_against_live(t, s, got, cost, 256).ratio)
    return {k: statistics.fmean(v) for k, v in ratios.items()}


def summarize(rows: list[dict], key: str) -> dict[str, tuple[float, float]]:
    names = rows[0][key].keys()
    return {n: (statistics.fmean(r[key][n] for r in rows), statistics.pstdev(r[key][n] for r in rows))
            for n in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from gammatune_tui.bench.modes.trace_cache import time_decoder

    pair, pid, traces, gammas, max_window = setup()
    session_s = traces[0].session_s

    def cycled() -> dict[str, tuple]:
        """The product's timing, and the same steps priced with the trimmed mean it used before."""
        kept: list = []
        cost, models = time_decoder(pair, pid[0], 256, max_window, session_s, keep_events=kept)
        return {"cycled, trimmed mean": retyped(cost, models, kept, session_s), "cycled": (cost, models)}

    timings = {
        "per-window, trimmed mean": lambda: {"per-window, trimmed mean": per_window_timing(pair, pid[0], max_window,
                                                                                          session_s)},
        "cycled": cycled,
    }
    out: dict[str, list[dict]] = {"per-window, trimmed mean": [], "cycled, trimmed mean": [], "cycled": []}
    print(f"load {load()}", flush=True)
    for r in range(args.rounds):
        got = {}
        for name in (list(timings) if r % 2 == 0 else list(timings)[::-1]):
            t0 = time.perf_counter()
            priced = timings[name]()
            took, at = time.perf_counter() - t0, load()
            got.update({k: (*v, took, at) for k, v in priced.items()})
        runs = live_runs(pair, pid, traces)
        for name in out:
            cost, models, took, at = got[name]
            row = {"timing_s": took, "load": at, "sim/live": against_live(runs, traces, cost),
                   **price(traces, cost, models, gammas)}
            out[name].append(row)
            print(f"round {r + 1} {name}: timed in {took:.1f} s, load {at}; sim/live "
                  + ", ".join(f"{k} {v:.3f}" for k, v in row["sim/live"].items()), flush=True)
    ref = next(iter(out))
    keys = ("sim/live", "prices_ms", "table2", "over_target_only")
    sref = {k: summarize(out[ref], k) for k in keys}
    for name, rows in out.items():
        print(f"\n== {name}: timing {statistics.fmean(r['timing_s'] for r in rows):.1f} s "
              f"(min {min(r['timing_s'] for r in rows):.1f}, max {max(r['timing_s'] for r in rows):.1f})")
        for key in keys:
            for n, (m, sd) in summarize(rows, key).items():
                rm, rsd = sref[key][n]
                print(f"  {key:16} {n:22} {m:8.4f} ± {sd:.4f}   ({ref} {rm:.4f} ± {rsd:.4f})")
        for n in rows[0]["shares"]:
            v = [r["shares"][n]["share"] for r in rows]
            ps = [r["shares"][n]["pass_spread"] for r in rows]
            ranks = sorted({r["shares"][n]["rank"] for r in rows})
            detail = sorted({r["shares"][n]["detail"] for r in rows} - {""})
            print(f"  share {n:24} {statistics.fmean(v):.4f} ± {statistics.pstdev(v):.4f}  "
                  f"pass spread {statistics.fmean(ps):.4f}  ranks {','.join(ranks)} {' '.join(detail)}")
    print(f"load {load()}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
