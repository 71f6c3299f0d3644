"""Measure the demo pair against its quality bars: `python -m gammatune_tui.demo.measure`.

Three numbers matter for a pair meant to show speculative decoding:
- the target's greedy completions read as Python;
- α, the draft's greedy agreement along the target's greedy path (teacher-forced,
  which is exactly the accept pattern of greedy speculative decoding), with the
  run lengths between rejections — runs of 0, of 1–3 and of 8+ are the paper's
  three regimes (§4);
- speculative greedy decoding beats plain target decoding in tokens/s, and emits
  the same tokens.
docs/demo-pair.md quotes this script's output.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from typing import TYPE_CHECKING
from pathlib import Path

import torch

from . import PAIR_DIR
from ..engine.common.pair import ModelPair
from ..engine.plain import PlainRun, plain_decode

if TYPE_CHECKING:
    from transformers import PreTrainedModel

REGIMES = (("0", 0, 0), ("1-3", 1, 3), ("4-7", 4, 7), ("8+", 8, 10**9))


@torch.no_grad()
def draft_matches(draft: PreTrainedModel, prompt_ids: list[int], path: list[int]) -> list[bool]:
    """For each token of the target's path: would the draft's greedy choice, given the true prefix, be it?"""
    dev = next(draft.parameters()).device
    ids = torch.tensor([prompt_ids + path[:-1]], device=dev)
    preds = draft(input_ids=ids).logits[0, len(prompt_ids) - 1 :].argmax(-1).tolist()
    return [p == t for p, t in zip(preds, path)]


def run_lengths(matches: list[bool]) -> list[int]:
    """Accepted tokens before each rejection (the last run is cut off by the end of the text)."""
    runs, n = [], 0
    for m in matches:
        if m:
            n += 1
        else:
            runs.append(n)
            n = 0
    runs.append(n)
    return runs


def regime_counts(runs: list[int]) -> dict[str, int]:
    return {name: sum(lo <= r <= hi for r in runs) for name, lo, hi in REGIMES}


def load(pair_dir: Path, threads: int) -> ModelPair:
    """The pair through the engine's loader: the code path every command takes."""
    from ..engine import load_pair

    return load_pair(target=str(pair_dir / "target"), draft=str(pair_dir / "draft"), device="cpu",
                     dtype="float32", threads=threads)


def plain_greedy(pair: ModelPair, prompt_ids: list[int], max_new: int) -> PlainRun:
    """Plain KV-cached greedy decoding on the paper's path: the baseline speculative decoding must beat (and match)."""
    return plain_decode(pair, prompt_ids, max_new, transformers_cache=True)


def speculative(pair: ModelPair, prompt: str, max_new: int, method: str, gamma0: int) -> tuple[list[int], float, dict]:
    from ..engine import PolicySettings, SamplingConfig, SpeculativeDecoder
    from ..engine.events import SessionSummary, StepEvent

    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0=gamma0), SamplingConfig(temperature=0.0))
    ids: list[int] = []
    summary = None
    t0 = time.perf_counter()
    for ev in dec.generate(prompt, max_new_tokens=max_new):
        if isinstance(ev, StepEvent):
            ids.extend(e.id for e in ev.emitted)
        elif isinstance(ev, SessionSummary):
            summary = ev
    wall = time.perf_counter() - t0
    info = {"steps": summary.steps, "acceptance_rate": summary.acceptance_rate} if summary else {}
    return ids, wall, info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gammatune_tui.demo.measure", description=__doc__.splitlines()[0])
    ap.add_argument("--pair-dir", type=Path, default=PAIR_DIR)
    ap.add_argument("--prompts", default="code", help="prompt set name or .jsonl path")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--methods", default="specdecode:4,gammatune+:4", help="method:gamma0 list for the speed test")
    ap.add_argument("--no-speed", action="store_true", help="only quality (completions, α, runs)")
    ap.add_argument("--show", type=int, default=3, help="completions to print")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args(argv)

    from ..prompts import load_prompt_set

    pair = load(args.pair_dir, args.threads)
    target, draft, tok = pair.target, pair.draft, pair.tokenizer
    assert draft is not None, "the demo pair has a draft model"
    torch.set_num_threads(args.threads)
    prompts = load_prompt_set(args.prompts)
    encode = lambda s: pair.encode_prompt(s, raw=True)  # noqa: E731
    n_params = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    print(f"pair: {args.pair_dir}  target {n_params(target):,} params, draft {n_params(draft):,} params, "
          f"{args.threads} threads, {len(prompts)} prompts, {args.max_new_tokens} new tokens each")

    # warm up both models (first calls allocate)
    plain_greedy(pair, encode(prompts[0].text), 8)
    draft_matches(draft, encode(prompts[0].text), [1, 2])

    paths, all_matches, all_runs = [], [], []
    plain_tokens, plain_s = 0, 0.0
    for p in prompts:
        ids = encode(p.text)
        run = plain_greedy(pair, ids, args.max_new_tokens)
        path = run.token_ids
        plain_s += run.wall_s
        plain_tokens += len(path)
        m = draft_matches(draft, ids, path)
        paths.append(path)
        all_matches.extend(m)
        all_runs.extend(run_lengths(m))
    alpha = sum(all_matches) / len(all_matches)
    hist = Counter(min(r, 16) for r in all_runs)
    regimes = regime_counts(all_runs)
    result = {
        "target_params": n_params(target), "draft_params": n_params(draft), "threads": args.threads,
        "prompts": len(prompts), "max_new_tokens": args.max_new_tokens,
        "alpha_greedy": round(alpha, 4), "tokens_checked": len(all_matches),
        "run_length_histogram": {("16+" if k == 16 else str(k)): hist[k] for k in sorted(hist)},
        "regimes": regimes,
        "plain_tokens_per_s": round(plain_tokens / plain_s, 1),
    }
    print(f"\nα (draft greedy agreement along the target's greedy path): {alpha:.3f} over {len(all_matches)} tokens")
    print("run lengths (accepted before a rejection):",
          "  ".join(f"{k}:{v}" for k, v in result["run_length_histogram"].items()))
    print("regimes:", "  ".join(f"{k}: {v}" for k, v in regimes.items()))
    print(f"plain target greedy: {plain_tokens} tokens in {plain_s:.2f}s = {plain_tokens / plain_s:.1f} tok/s")

    for p, path in list(zip(prompts, paths))[: args.show]:
        print(f"\n--- {p.id} (greedy, target) ---\n{p.text}\u2502{tok.decode(path)}")

    if not args.no_speed:
        # per prompt, plain then each method, so a busy machine slows them alike
        methods = [(m, int(g or 4)) for m, _, g in (spec.partition(":") for spec in args.methods.split(","))]
        for method, gamma0 in methods:
            speculative(pair, prompts[0].text, 8, method, gamma0)  # warm-up
        acc = {m: [0, 0.0, 0, 0] for m in methods}  # tokens, seconds, identical, steps
        plain_tokens, plain_s = 0, 0.0
        for p, path in zip(prompts, paths):
            ids = encode(p.text)
            again = plain_greedy(pair, ids, args.max_new_tokens)
            plain_s += again.wall_s
            plain_tokens += again.tokens
            for meth in methods:   # not `m`: that name held a prompt's draft matches above
                got, wall, info = speculative(pair, p.text, args.max_new_tokens, *meth)
                a = acc[meth]
                a[0] += len(got)
                a[1] += wall
                a[2] += got == path
                a[3] += info.get("steps", 0)
        plain_tps = plain_tokens / plain_s
        result["plain_tokens_per_s_interleaved"] = round(plain_tps, 1)
        print(f"\nspeed (interleaved per prompt): plain target greedy {plain_tps:.1f} tok/s")
        result["speculative"] = {}
        for (method, gamma0), (toks, secs, same, steps) in acc.items():
            tps = toks / secs
            result["speculative"][f"{method}:{gamma0}"] = {
                "tokens_per_s": round(tps, 1), "speedup": round(tps / plain_tps, 2),
                "identical_to_plain": same, "tokens_per_step": round(toks / max(1, steps), 2)}
            print(f"speculative greedy {method} γ0={gamma0}: {toks} tokens in {secs:.2f}s = {tps:.1f} tok/s "
                  f"({tps / plain_tps:.2f}× plain), {toks / max(1, steps):.2f} tokens/step, "
                  f"identical to plain greedy on {same}/{len(prompts)} prompts")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
