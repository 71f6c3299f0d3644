"""What rolling back a hybrid model's recurrent state costs a speculative step, beside an attention-only model.

A hybrid model (Gated DeltaNet + attention, a Qwen3.5-0.8B-like shape by
default, random weights) decodes greedily with a self-draft (`self:int8` by
default: windows mostly accepted, sometimes rejected). Each step's draft and
verify times come from the decoder's own clock; the rollback is the time
spent in the runners' `rewind` (for the hybrid runner: restoring the snapshot
and feeding the kept tokens again; engine/runners/recurrent.py), and the
snapshots taken before each forward are timed apart (they sit inside the draft
and verify times). The same is measured for an attention-only model of the same
size (the same widths and depth, every layer full attention), whose rewind is
setting a length or a crop.

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hybrid_rollback.py [--layers 24] [-n 48]

Times are wall-clock on whatever machine runs it; on a shared machine, read
the ratios (rollback / verify, measured in the same steps) rather than the
milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: the checkout it names is measured

import torch  # noqa: E402

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent  # noqa: E402
from gammatune_tui.engine.loading.models import ModelPair  # noqa: E402
from gammatune_tui.engine.runners import recurrent  # noqa: E402
from gammatune_tui.engine.runners.base import Runner  # noqa: E402

# A Qwen3.5-0.8B-like text stack: 16 Gated DeltaNet heads of 128 (key and value), three linear-attention layers
# to one full-attention layer, hidden 1024, 24 layers, a 248k vocabulary with tied embeddings.
SHAPE = dict(hidden_size=1024, intermediate_size=3584, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
             vocab_size=248320, tie_word_embeddings=True, max_position_embeddings=4096)
LINEAR = dict(linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
              linear_conv_kernel_dim=4)


def build(kind: str, layers: int):
    from transformers import AutoConfig, AutoModelForCausalLM

    if kind == "hybrid":
        types = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)]
        cfg = AutoConfig.for_model("qwen3_5_text", num_hidden_layers=layers, layer_types=types, **SHAPE, **LINEAR)
    else:
        cfg = AutoConfig.for_model("qwen3", num_hidden_layers=layers, **SHAPE)
    cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id = 0, None, None
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg).eval()


def word_tokenizer(vocab: int):
    """A tokenizer with one word per id, so that any id the random model emits decodes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel(vocab={f"w{i} ": i for i in range(vocab)}, unk_token="w0 "))
    tk.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tk.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="w0 ", clean_up_tokenization_spaces=False)


class Clock:
    """Seconds spent in every runner's `rewind` and in the hybrid runner's snapshots, per step."""

    def __init__(self) -> None:
        self.rewind = 0.0
        self.snapshot = 0.0

    def install(self) -> None:
        clock = self
        for cls in {c for c in _subclasses(Runner)}:
            if "rewind" in vars(cls):
                orig = vars(cls)["rewind"]

                def timed(self, length, _orig=orig):
                    t = time.perf_counter()
                    _orig(self, length)
                    clock.rewind += time.perf_counter() - t

                cls.rewind = timed
        snap_init = recurrent.Snapshot.__init__

        def timed_snap(self, *a, **k):
            t = time.perf_counter()
            snap_init(self, *a, **k)
            clock.snapshot += time.perf_counter() - t

        recurrent.Snapshot.__init__ = timed_snap

    def take(self) -> tuple[float, float]:
        out = (self.rewind, self.snapshot)
        self.rewind = self.snapshot = 0.0
        return out


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def measure(kind: str, layers: int, draft: str, gamma: int, n: int, clock: Clock) -> dict:
    model = build(kind, layers)
    tok = word_tokenizer(model.config.vocab_size)
    pair = ModelPair(target=model, draft=None, tokenizer=tok, device=torch.device("cpu"), dtype=torch.float32,
                     eos_ids=frozenset({-1}), name_target=f"{kind}-{layers}L", name_draft=draft)
    prompt = torch.randint(1, model.config.vocab_size, (32,), generator=torch.Generator().manual_seed(1)).tolist()
    rows = []

    def one(max_new: int) -> list:
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma), SamplingConfig(), drafter=draft)
        steps = []
        dec.on_step = lambda d: steps.append(clock.take() + (sum(_pending(r) for r in d.runners),))
        clock.take()
        events = [e for e in dec.generate(prompt, max_new_tokens=max_new) if isinstance(e, StepEvent)]
        return list(zip(events, steps))

    one(gamma + 2)   # warm-up: the self-draft is built, first-call paths run
    for ev, (rewind_s, snap_s, pending) in one(n):
        rows.append(dict(drafted=len(ev.drafted), accepted=ev.accepted, draft=ev.draft_s, verify=ev.verify_s,
                         rollback=rewind_s, snapshot=snap_s, step=ev.step_s, pending=pending))
    from gammatune_tui.engine import with_draft
    from gammatune_tui.engine.runners import runner_pool

    runner = runner_pool(with_draft(pair, draft) if draft.startswith("self:") else pair).label
    pend = [r["pending"] for r in rows if r["pending"]]
    p = max(1, round(statistics.median(pend))) if pend else 2
    return dict(kind=kind, runner=runner, rows=rows, pending=p, **pass_costs(pair, prompt, gamma + 1, p))


def _pending(runner) -> int:
    """Kept tokens a hybrid runner left for its next forward (0 for the others)."""
    return runner.length - runner._length if isinstance(runner, recurrent.HybridRunner) else 0


def pass_costs(pair, prompt: list, q: int, p: int, repeats: int = 5) -> dict:
    """The target's pass over a window of q tokens, over p more tokens ahead of it, and over p tokens alone
    (a separate re-feed pass), alternated over one prefilled state and rewound after each; medians in seconds."""
    from gammatune_tui.engine.runners import runner_pool

    pool = runner_pool(pair)
    runners = pool.acquire()
    run = runners.target
    try:
        run.start(len(prompt) + q + p + 8)
        run.prefill(torch.tensor([prompt]))
        base = run.length
        extra = torch.tensor([prompt[:q + p]])
        times: dict[str, list] = {"q": [], "qp": [], "p": []}
        for _ in range(repeats):
            for key, ids in (("q", extra[:, :q]), ("qp", extra), ("p", extra[:, :p])):
                t = time.perf_counter()
                run.forward(ids, ids.shape[1] if key != "p" else 1)
                times[key].append(time.perf_counter() - t)
                run.rewind(base)
    finally:
        pool.release(runners)
    return {k: statistics.median(v) for k, v in times.items()}


def summarize(res: dict) -> str:
    rows = res["rows"]
    rej = [r for r in rows if r["drafted"] and r["accepted"] < r["drafted"]]
    acc = sum(r["accepted"] for r in rows) / max(1, sum(r["drafted"] for r in rows))

    def med(key, among):
        return statistics.median(r[key] for r in among) * 1000 if among else float("nan")

    # the kept tokens ride in the next verify pass: each costs that pass what one more token in it costs
    per_token = max(0.0, res["qp"] - res["q"]) / res["pending"] * 1000
    verify = med("verify", rows)
    cost = [r["rollback"] * 1000 + r["pending"] * per_token for r in rej]
    share = [c / (r["step"] * 1000 + r["pending"] * per_token) for c, r in zip(cost, rej)]
    kept = [r["pending"] for r in rej]
    return (f"| {res['kind']} ({res['runner']}) | {len(rows)} | {len(rej)} | {acc:.2f} | {med('draft', rows):.0f} | "
            f"{verify:.0f} | {med('snapshot', rows):.1f} | {med('rollback', rej):.1f} | "
            f"{statistics.median(kept) if kept else 0:g} (max {max(kept, default=0)}) | {per_token:.0f} | "
            f"{statistics.median(cost) / verify if cost else float('nan'):.2f} | "
            f"{100 * statistics.median(share) if share else float('nan'):.1f} % | "
            f"{res['p'] * 1000:.0f} ({res['p'] * 1000 / verify:.2f}) |\n"
            f"<!-- steps (drafted, accepted, kept tokens waiting after it): "
            f"{[(r['drafted'], r['accepted'], r['pending']) for r in rows]} -->")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--draft", default="self:int8")
    ap.add_argument("--gamma", type=int, default=4)
    ap.add_argument("-n", "--max-new-tokens", type=int, default=48)
    ap.add_argument("--models", default="hybrid,attention")
    args = ap.parse_args()
    torch.set_num_threads(1)
    clock = Clock()
    clock.install()
    print(f"# {args.layers} layers, draft {args.draft}, specdecode γ={args.gamma}, {args.max_new_tokens} tokens; "
          f"torch {torch.__version__}, load {os.getloadavg()[0]:.2f} at start")
    print("| model (runner) | steps | rejecting | acceptance | draft ms | verify ms | snapshots ms/step | "
          "rewind ms (rejecting steps) | kept tokens waiting (rejecting steps) | ms each adds to the next verify | "
          "rollback / verify | rollback share of a rejecting step | a separate re-feed pass, ms (/ verify) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in args.models.split(","):
        print(summarize(measure(kind, args.layers, args.draft, args.gamma, args.max_new_tokens, clock)), flush=True)
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
