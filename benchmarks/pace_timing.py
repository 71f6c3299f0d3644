"""Does pacing change the timings? Paced and full-speed sessions of the same greedy prompt, interleaved.

The chat's pace (session/pace.py) holds the decoder between steps. The wait
is taken out of the clocks, but a thread that slept for 1/rate seconds can
start the next step colder than one that did not (a lower clock, caches
other processes have filled, a core the scheduler gave away): issue 24 row 8
measured draft times +60 % at `--pace 4`. This script runs the demo pair on
one prompt, alternately at full speed and at each pace given, in one process,
and prints the median draft, verify and step times per step (wall clock,
as the app shows them), the median CPU time per step (which a busy machine
disturbs far less) and tokens/s with the waits taken out, per condition. Each pace
runs twice: as the app runs it, and with a 20 ms busy spin after each wait
(an attempt to start each step on a warm core; it did not help, see
docs/benchmarks.md, so the app does not spin).

    .venv/bin/python benchmarks/pace_timing.py [--paces 4,2] [--reps 5] [--tokens 64]
    .venv/bin/python benchmarks/pace_timing.py --forward-check 80   # one forward pass after a sleep, in CPU time
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder, load_pair  # noqa: E402
from gammatune_tui.engine.events import SessionSummary, StepEvent  # noqa: E402
from gammatune_tui.engine.policies import PolicySettings  # noqa: E402
from gammatune_tui.session.pace import StepPacer  # noqa: E402

SPIN_S = 0.02  # the spin tried after each wait


def one(decoder: SpeculativeDecoder, prompt: str, tokens: int, pace: float, spin_s: float) -> dict:
    """One session, held as `paced()` holds it; each step's CPU time is taken around the decoder's own step.

    The CPU time (this thread's, `time.thread_time`) does not grow when other
    processes take the core, as the wall-clock draft and verify times do on a
    busy machine; a colder core or cache still shows in it.
    """
    pacer = StepPacer(pace) if pace else None
    steps, cpu, summary = [], [], None
    gen = decoder.generate(prompt, max_new_tokens=tokens)
    if pacer is not None:
        pacer.begin()
    while True:
        c0 = time.thread_time()
        try:
            ev = next(gen)
        except StopIteration:
            break
        c1 = time.thread_time()
        if isinstance(ev, StepEvent):
            steps.append(ev)
            cpu.append(c1 - c0)
            if pacer is not None:
                pacer.wait()
                end = time.perf_counter() + spin_s
                while time.perf_counter() < end:   # the spin tried (0: none, as the app runs)
                    pass
                pacer.waited_s += spin_s
        elif isinstance(ev, SessionSummary):
            summary = ev
    wall = summary.wall_s - (pacer.waited_s if pacer is not None else 0.0)
    return {"draft_ms": statistics.median(e.draft_s for e in steps) * 1e3,
            "verify_ms": statistics.median(e.verify_s for e in steps) * 1e3,
            "step_ms": statistics.median(e.step_s for e in steps) * 1e3,
            "cpu_ms": statistics.median(cpu) * 1e3,
            "tok_s": summary.tokens / wall if wall > 0 else 0.0, "steps": len(steps)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paces", default="4,2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--prompt", default="def quicksort(items):")
    ap.add_argument("--forward-check", type=int, default=0, metavar="N",
                    help="instead: N single forward passes after a sleep, a sleep + spin, a sleep + weights read, and none (CPU time)")
    args = ap.parse_args()
    if args.forward_check:
        forward_check(args.forward_check)
        return
    # (pace, spin): full speed, then each pace as the app runs it and with the spin tried
    conds = [(0.0, 0.0)] + [(float(p), spin) for p in args.paces.split(",") for spin in (0.0, SPIN_S)]
    pair = load_pair(demo=True, device="cpu")
    decoder = SpeculativeDecoder(pair, PolicySettings.build("gammatune+", 4), SamplingConfig(temperature=0.0))
    one(decoder, args.prompt, args.tokens, 0.0, 0.0)   # warm
    runs: dict[tuple, list[dict]] = {c: [] for c in conds}
    loads = [os.getloadavg()[0]]
    for r in range(args.reps):
        for c in (conds if r % 2 == 0 else conds[::-1]):   # interleaved: a busy spell owns no condition
            runs[c].append(one(decoder, args.prompt, args.tokens, *c))
        loads.append(os.getloadavg()[0])
    print(f"load average {min(loads):.1f}–{max(loads):.1f}; {args.reps} runs each, {args.tokens} tokens, greedy, "
          f"gammatune+ γ0 4, demo pair, {torch_threads()} torch thread(s)")
    print(f"{'condition':>18} {'draft ms':>9} {'verify ms':>9} {'step ms':>8} {'CPU ms':>7} {'tok/s':>7}  "
          "(medians of the runs' medians; ranges over runs)")
    for c in conds:
        rs = runs[c]
        med = {k: statistics.median(x[k] for x in rs) for k in ("draft_ms", "verify_ms", "step_ms", "cpu_ms", "tok_s")}
        span = {k: (min(x[k] for x in rs), max(x[k] for x in rs)) for k in ("draft_ms", "cpu_ms", "tok_s")}
        label = "full speed" if not c[0] else f"{c[0]:g}/s, spin {c[1] * 1e3:g} ms"
        print(f"{label:>18} {med['draft_ms']:9.3f} {med['verify_ms']:9.3f} {med['step_ms']:8.3f} {med['cpu_ms']:7.3f} "
              f"{med['tok_s']:7.1f}  (draft {span['draft_ms'][0]:.2f}–{span['draft_ms'][1]:.2f}, "
              f"CPU {span['cpu_ms'][0]:.2f}–{span['cpu_ms'][1]:.2f}, tok/s {span['tok_s'][0]:.1f}–{span['tok_s'][1]:.1f})")


def forward_check(reps: int) -> None:
    """One draft and one target forward pass (32 tokens, no cache), in CPU time, right after a 250 ms sleep,
    after a 230 ms sleep and a 20 ms spin, after a sleep and a read of every weight, and with no sleep:
    is a core that slept any slower here, and does either remedy help?"""
    import torch

    pair = load_pair(demo=True, device="cpu")
    ids = torch.arange(5, 37).unsqueeze(0)

    def step(model: object) -> None:
        with torch.no_grad():
            model(ids)

    kinds = ("no sleep", "sleep", "sleep + spin", "sleep + touch")
    res: dict[str, dict[str, list[float]]] = {k: {"draft": [], "target": []} for k in kinds}
    for _ in range(5):
        step(pair.draft)
        step(pair.target)
    loads = [os.getloadavg()[0]]
    for r in range(reps):
        for k in (kinds if r % 2 else kinds[::-1]):
            if k == "no sleep":
                step(pair.draft)
                step(pair.target)
            elif k == "sleep":
                time.sleep(0.25)
            elif k == "sleep + touch":   # read every weight again first: is it the caches?
                time.sleep(0.25)
                with torch.no_grad():
                    for m in (pair.draft, pair.target):
                        for p in m.parameters():
                            p.sum()
            else:
                time.sleep(0.23)
                end = time.perf_counter() + SPIN_S
                while time.perf_counter() < end:
                    pass
            c0 = time.thread_time()
            step(pair.draft)
            c1 = time.thread_time()
            step(pair.target)
            c2 = time.thread_time()
            res[k]["draft"].append((c1 - c0) * 1e3)
            res[k]["target"].append((c2 - c1) * 1e3)
    loads.append(os.getloadavg()[0])
    print(f"load average {min(loads):.1f}–{max(loads):.1f}; {reps} of each, CPU ms (median)")
    for k in kinds:
        print(f"{k:>14}: draft {statistics.median(res[k]['draft']):.3f}  target {statistics.median(res[k]['target']):.3f}")


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()
