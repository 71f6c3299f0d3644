"""The race of benchmarks/assistant_vs_hf.py and dflash_vs_hf.py: transformers' `generate` with a draft head against
gammatune's decoder with the same head, on one checkpoint in one run. The sides alternate, round after round, so a
busy spell of the machine slows every side a little rather than one side a lot; the first round only warms up."""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable


def arguments(doc: str | None, *, tokens: int, repeats: int, hidden: int, layers: int) -> argparse.ArgumentParser:
    """The options every race takes (the target's shape, its length, its rounds, a JSON file for the result)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=tokens)
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--hidden", type=int, default=hidden)
    ap.add_argument("--layers", type=int, default=layers)
    ap.add_argument("--json", type=Path)
    return ap


def packed_pair(target: Any, drafter: str) -> tuple[Any, Any]:
    """(gammatune's pair over a copy of `target`, the packing): gammatune's side runs what load_pair loads, a
    float32 CPU target whose multi-row passes read packed weights where that pays (engine/common/packed_linear.py);
    transformers keeps the original, unpacked."""
    import torch

    from gammatune_tui.engine.common.packed_linear import pack_for_verify
    from gammatune_tui.engine.common.pair import ModelPair
    from tiny_models import make_byte_tokenizer

    mine = copy.deepcopy(target)
    packing = pack_for_verify(mine, torch.device("cpu"), torch.float32)
    pair = ModelPair(target=mine, draft=None, tokenizer=make_byte_tokenizer(), device=torch.device("cpu"),
                     dtype=torch.float32, eos_ids=frozenset({-1}), name_target=target.config.model_type,
                     name_draft=drafter)
    return pair, packing


def ours(pair: Any, method: str, gamma: int, drafter: Any, prompt: list[int], tokens: int) -> tuple[list[int], float]:
    """gammatune's greedy tokens with `method` at γ0 = `gamma` and the head in `drafter`, and its acceptance."""
    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent

    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma), SamplingConfig(), drafter=drafter)
    evs = list(dec.generate(prompt, max_new_tokens=tokens))
    return [t.id for e in evs if isinstance(e, StepEvent) for t in e.emitted], evs[-1].accepted / max(1, evs[-1].drafted)


def race(target: Any, prompt: list[int], hf_kwargs: dict[str, Any], mine: Callable[[str], tuple[list[int], float]],
         *, title: str, shape: str, args: argparse.Namespace, packed: bool) -> None:
    """Alternate transformers (`target.generate(**hf_kwargs)`, greedy), gammatune at the same γ (specdecode, `mine`)
    and gammatune's own policy (gammatune+), `args.repeats` timed rounds after one warm-up; print the machine, the
    table (tokens/s from medians) and each side's agreement with plain `generate`."""
    import torch
    import transformers

    print(f"# {title}, CPU {os.cpu_count()} cores, {torch.get_num_threads()} threads, torch {torch.__version__}, "
          f"transformers {transformers.__version__}, {shape}, {args.tokens} tokens, {args.repeats} alternating "
          f"repeats; gammatune's verify {'packed' if packed else 'not packed'}; load average "
          f"{os.getloadavg()[0]:.2f}\n")
    x = torch.tensor([prompt])

    def generate(**kw: Any) -> list[int]:
        with torch.inference_mode():
            return target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=args.tokens,
                                   **kw)[0, len(prompt):].tolist()

    ref = generate()
    sides: dict[str, Callable[[], tuple[list[int], float]]] = {
        "hf": lambda: (generate(**hf_kwargs), 0.0), "g": lambda: mine("specdecode"),
        "gplus": lambda: mine("gammatune+")}
    times: dict[str, list[float]] = {k: [] for k in sides}
    outs: dict[str, list[int]] = {}
    acc = 0.0
    for r in range(args.repeats + 1):
        for key, run in sides.items():
            t = time.perf_counter()
            got, accepted = run()
            dt = time.perf_counter() - t
            outs[key] = got
            acc = accepted if key == "g" else acc
            if r:
                times[key].append(dt)
    tps = {k: args.tokens / statistics.median(v) for k, v in times.items()}
    same = {k: o == ref for k, o in outs.items()}
    print("| transformers tok/s | gammatune γ tok/s | × | gammatune+ tok/s | acceptance | tokens = generate |\n"
          "|---:|---:|---:|---:|---:|---|")
    print(f"| {tps['hf']:.1f} | {tps['g']:.1f} | {tps['g'] / tps['hf']:.2f} | {tps['gplus']:.1f} | {acc:.2f} | "
          f"{'yes' if all(same.values()) else 'NO: ' + ', '.join(k for k, v in same.items() if not v)} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"packed": packed, "tokens_per_s": tps, "ratio": tps["g"] / tps["hf"],
                                         "acceptance": acc, "identical": same}, indent=2))
