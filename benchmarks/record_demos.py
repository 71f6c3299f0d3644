"""Re-record the demo recordings shipped in demo_prompts/recordings/ with the current defaults.

The recordings are evidence: a replay shows what each method did and how
fast, and a reader takes the numbers at face value. Made with old defaults
they mislead (the first `five-methods` showed gammatune+ last at 0.74×,
made with δ = 1, γ_min = 1 before the defaults were measured), so this
script makes all of them with the commands the README documents, at the
current defaults, and `tests/session/test_shipped_recordings.py` fails when
a shipped recording's settings are not the current defaults. Run it after
changing a default, a policy, the engine or the demo pair:

    make recordings                        # or: .venv/bin/python benchmarks/record_demos.py [--out DIR]

Every command runs in its own process (`python -m gammatune_tui`), one
after the other, on 1 torch thread; the chat recording drives the same
`LiveSource` the chat app drives (in-thread), two turns. The timings in the
files are this machine's: say which machine and its load when quoting them
(the script prints both).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gammatune_tui.prompts import load_prompt_set  # noqa: E402

PROMPTS = load_prompt_set("code")
STACK = PROMPTS[4].text          # line 5 of demo_prompts/code.jsonl: class Stack
PARSE_HEADER = PROMPTS[12].text  # line 13: def parse_header(line)
CHAT_TURNS = ("class Point:", "    def distance(self, other):")

# name → the gammatune command line that makes it (the README of the recordings lists the same)
COMMANDS = {
    "all-methods": ["compare", PARSE_HEADER, "--methods", "all", "--temperature", "0", "-n", "128", "--threads", "1",
                    "--print"],
    "gammatune-plus": ["run", STACK, "-m", "gammatune+", "-n", "160", "--threads", "1"],
    "specdecode": ["run", STACK, "-m", "specdecode", "-n", "160", "--threads", "1"],
}


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def record_cli(name: str, out: Path) -> None:
    path = out / f"{name}.jsonl"
    args = [sys.executable, "-m", "gammatune_tui", *COMMANDS[name], "--record", str(path)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    subprocess.run(args, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def record_chat(out: Path) -> None:
    """`gammatune chat "class Point:" -n 96 --threads 1 --record …`, then a second turn, without the app."""
    from gammatune_tui.commands.options import default_options
    from gammatune_tui.session.live import LiveSource
    from gammatune_tui.session.recording import RecordingWriter

    opts = default_options(max_new_tokens=96, threads=1)
    source = LiveSource(opts.policy_settings(), opts.sampling(demo_defaults=True), load_kwargs=opts.load_kwargs(),
                        max_new_tokens=opts.max_new_tokens, raw=opts.raw, process=False)
    source.prepare(lambda stage, frac: None)
    with RecordingWriter(out / "chat-two-turns.jsonl") as writer:
        for prompt in CHAT_TURNS:
            for ev in source.events(prompt):
                writer.write(ev)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "demo_prompts" / "recordings",
                    help="where to write the recordings (default: the shipped ones)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores; "
          f"load average before: {_load()}")
    for name in COMMANDS:
        t0 = time.perf_counter()
        record_cli(name, args.out)
        print(f"{name}.jsonl in {time.perf_counter() - t0:.0f} s (load {_load()})")
    t0 = time.perf_counter()
    record_chat(args.out)
    print(f"chat-two-turns.jsonl in {time.perf_counter() - t0:.0f} s (load {_load()})")


if __name__ == "__main__":
    main()
