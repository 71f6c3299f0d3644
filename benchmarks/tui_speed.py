"""How fast is the chat TUI? Two measurements (docs/benchmarks.md, "Chat TUI").

1. Responsiveness at the end of a long session: a synthetic source streams
   20,000 tokens through the real app (headless, 140×44); then a key is
   pressed N times and we time from the key event to the first bytes the app
   writes to the terminal for it (key-press-to-screen latency). Also: how many
   steps per second the UI can absorb.
2. Generation speed inside the TUI vs. plain `gammatune run`: the same pair,
   prompt, settings and seed, greedy; tokens/s from the decoder's summary,
   direct (what `run` does) against inside the app (worker thread + UI).
   Uses the embedded demo pair when it is installed, else a random-weight
   Llama pair built here (no download).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/tui_speed.py [--tokens 20000] [--reps 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gammatune_tui.engine.policies import PolicySettings  # noqa: E402
from gammatune_tui.engine.common.sampling import SamplingConfig  # noqa: E402
from gammatune_tui.ui.app import make_app  # noqa: E402
from gammatune_tui.session.synthetic import SyntheticSource  # noqa: E402

SIZE = (140, 44)


async def _wait(pilot, cond, timeout=600.0, poll=0.05):
    """Sleep until cond() (a plain sleep: pilot.pause would itself load the UI thread)."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("benchmark step timed out")
        await asyncio.sleep(poll)


# -- 1. latency at the end of a long session ---------------------------------------------
async def latency(tokens: int, presses: int) -> dict:
    src = SyntheticSource(steps=10**9, agreement=0.8, max_new_tokens=tokens, seed=1)
    app = make_app(src, prompt="def parse(text):")
    async with app.run_test(size=SIZE) as pilot:
        chat = app.main_screen
        t0 = time.perf_counter()
        await _wait(pilot, lambda: chat.stats.summary is not None and not chat.generating)
        absorb_s = time.perf_counter() - t0
        await pilot.pause(0.5)
        # Headless apps compose every update but skip the terminal write, so we time the
        # moment the compositor hands a finished screen update to the display.
        writes: list[float] = []
        original = app._display

        def recording_display(screen, renderable) -> None:
            if renderable is not None:
                writes.append(time.perf_counter())
            original(screen, renderable)

        app._display = recording_display  # type: ignore[method-assign]
        prompt = chat.query_one("#prompt")
        prompt.focus()
        await pilot.pause(0.2)
        lat_type, lat_toggle = [], []
        for i in range(presses):
            for key, out in (("x", lat_type), ("f4", lat_toggle)):
                writes.clear()
                k0 = time.perf_counter()
                await pilot.press(key)
                await _wait(pilot, lambda: bool(writes), timeout=10, poll=0.0005)
                out.append(writes[0] - k0)
                await pilot.pause(0.05)
        result = {
            "tokens": chat.transcript.token_count, "steps": len(chat.steps), "lines": chat.transcript.line_count,
            "absorb_steps_per_s": len(chat.steps) / absorb_s, "absorb_tokens_per_s": chat.stats.tokens / absorb_s,
            "type_ms": [x * 1000 for x in lat_type], "toggle_ms": [x * 1000 for x in lat_toggle],
        }
    return result


# -- 2. generation speed: TUI vs plain ------------------------------------------------------
def _pair():
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.resources import demo_pair_installed

    if demo_pair_installed():
        kw = {"device": "cpu", "dtype": "float32", "threads": 1}
        return load_pair(**kw), "embedded demo pair", kw
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import make_byte_tokenizer, make_llama, noisy_copy  # type: ignore

    tmp = Path(tempfile.mkdtemp(prefix="gt-bench-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    tok = make_byte_tokenizer()
    target = make_llama(len(tok), seed=1, hidden=256, layers=6, init=1.0)
    draft = noisy_copy(make_llama(len(tok), seed=1, hidden=256, layers=6, init=1.0), seed=2, scale=0.15)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    for name, m in (("target", target), ("draft", draft)):
        m.save_pretrained(tmp / name)
        tok.save_pretrained(tmp / name)
    kw = {"target": str(tmp / "target"), "draft": str(tmp / "draft"), "device": "cpu", "dtype": "float32",
          "threads": 1}
    return load_pair(**kw), "random-weight Llama pair (hidden 256, 6 layers, byte vocabulary)", kw


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CPU = {"direct": [], "tui": []}   # decoder CPU ms per token, the load-independent view


def run_direct(pair, settings, sampling, prompt, max_new) -> float:
    """What `gammatune run` does: iterate the decoder in the main thread."""
    from gammatune_tui.engine import SpeculativeDecoder

    dec = SpeculativeDecoder(pair, settings, sampling)
    summary = None
    c0 = time.thread_time()
    for ev in dec.generate(pair.encode_prompt(prompt, raw=True), max_new):
        summary = ev
    if max_new > 32:
        CPU["direct"].append((time.thread_time() - c0) * 1000 / max(1, summary.tokens))
    return summary.tokens_per_s, summary.tokens


async def run_tui(pair, settings, sampling, prompt, max_new, load_kwargs=None) -> float:
    """Inside the app. With load_kwargs: the decoder in its own process (what `gammatune chat` does);
    else in a worker thread of the UI process (the in-process mode tests use)."""
    from gammatune_tui.session.live import LiveSource

    if load_kwargs is not None:
        src = LiveSource(settings, sampling, load_kwargs=load_kwargs, max_new_tokens=max_new, raw=True)
    else:
        src = LiveSource(settings, sampling, pair=pair, max_new_tokens=max_new, raw=True)
    app = make_app(src)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.main_screen
        # like a user: the app has started and is idle, then the prompt is sent
        await _wait(pilot, lambda: chat.ready)
        await pilot.pause(1.0)
        proc = getattr(src.link, "_proc", None)
        c0 = _proc_cpu(proc.pid) if proc is not None else None
        chat.start_turn(prompt)
        await _wait(pilot, lambda: chat.stats.summary is not None and not chat.generating)
        s = chat.stats.summary
        if c0 is not None:
            CPU["tui"].append((_proc_cpu(proc.pid) - c0) * 1000 / max(1, s.tokens))
    return s.tokens_per_s, s.tokens


def speed(reps: int, max_new: int) -> dict:
    pair, what, load_kwargs = _pair()
    settings = PolicySettings.build("gammatune+", 4)
    sampling = SamplingConfig(temperature=0.0, seed=0)
    prompt = "def fibonacci(n):\n    "
    run_direct(pair, settings, sampling, prompt, 16)  # warm-up
    direct, tui, thread = [], [], []
    for _ in range(reps):
        d, nd = run_direct(pair, settings, sampling, prompt, max_new)
        t, nt = asyncio.run(run_tui(pair, settings, sampling, prompt, max_new, load_kwargs))
        h, _ = asyncio.run(run_tui(pair, settings, sampling, prompt, max_new))
        direct.append(d)
        tui.append(t)
        thread.append(h)
    return {"pair": what, "tokens": nd, "tokens_tui": nt, "direct": direct, "tui": tui, "thread": thread,
            "ratio": statistics.median(tui) / statistics.median(direct),
            "ratio_thread": statistics.median(thread) / statistics.median(direct),
            "pairwise": [t / d for t, d in zip(tui, direct)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=20_000)
    ap.add_argument("--presses", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-new", type=int, default=256)
    ap.add_argument("--speed-only", action="store_true", help="only the TUI-vs-run generation speed")
    ap.add_argument("--quick", action="store_true", help="2,000 tokens, 5 presses, 1 rep")
    a = ap.parse_args()
    if a.quick:
        a.tokens, a.presses, a.reps = 2000, 5, 1
    if a.speed_only:
        return report_speed(a)
    lat = asyncio.run(latency(a.tokens, a.presses))

    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    print(f"## latency after {lat['tokens']:,} tokens ({lat['steps']:,} steps, {lat['lines']:,} transcript lines)")
    print(f"UI absorbed {lat['absorb_steps_per_s']:,.0f} steps/s ({lat['absorb_tokens_per_s']:,.0f} tokens/s)")
    for name in ("type_ms", "toggle_ms"):
        xs = lat[name]
        print(f"{name[:-3]:>6}: median {statistics.median(xs):.1f} ms, p90 {pct(xs, 0.9):.1f} ms, max {max(xs):.1f} ms"
              f"  (n={len(xs)})")
    report_speed(a)


def report_speed(a) -> None:
    sp = speed(a.reps, a.max_new)
    print(f"## generation speed: {sp['pair']}, greedy, gammatune+ γ0=4, {sp['tokens']} tokens")
    print("direct (run): " + ", ".join(f"{x:.1f}" for x in sp["direct"]) + " tok/s")
    print("inside TUI:   " + ", ".join(f"{x:.1f}" for x in sp["tui"]) + " tok/s  (decoder process, as `gammatune chat`)")
    print("TUI, thread:  " + ", ".join(f"{x:.1f}" for x in sp["thread"]) + " tok/s  (decoder in a UI worker thread)")
    print(f"TUI / run = {sp['ratio'] * 100:.1f}% (medians over {a.reps} alternating runs; "
          f"run by run: {', '.join(f'{x * 100:.0f}%' for x in sp['pairwise'])})")
    print(f"thread mode / run = {sp['ratio_thread'] * 100:.1f}%")
    if CPU["direct"] and CPU["tui"]:
        d, t = statistics.median(CPU["direct"]), statistics.median(CPU["tui"])
        print(f"decoder CPU per token: run {d:.2f} ms, TUI's decoder process {t:.2f} ms "
              f"(speed at equal CPU: {d / t * 100:.1f}%)")


if __name__ == "__main__":
    main()
