"""gammatune's `--draft mtp` against transformers' `generate(use_mtp=True)`, side by side in one run (issue 41's
goal: identical tokens and drafts, and gammatune at least 1.2× tokens/s at the same γ).

For each family whose head transformers runs (Mellum, DeepSeek-V3), a checkpoint of a small shape with random
weights and a one-layer head is written as a real safetensors folder (tests/tiny_mtp.py) and loaded once. With
`--train` (default on) the head is first fitted for a few seconds on the target's own greedy text
(tests/tiny_mtp.py `train_head`), so that acceptance is high, as with a released head; transformers is handed
the same fitted head (its loader, `MtpModel.from_pretrained(target)`, returns it). Then, alternating,
`--repeats` times each:
- transformers: `target.generate(x, do_sample=False, use_mtp=True)` — γ fixed to the head's layer count (1);
- gammatune: `SpeculativeDecoder(pair, specdecode γ0 = 1, drafter="mtp")` — the same γ, the same head;
- gammatune's own policy (gammatune+, γ0 3), which chains the head past its depth, for reference;
- with `--mtp-vocab N`, gammatune at γ 1 again with the head's logits over N tokens only (FR-Spec, `--draft mtp
  --mtp-vocab N`): the same forwards, the head's projection N rows instead of V.
`--vocab V` gives the checkpoint a real vocabulary size (DeepSeek-V3's is 129,280), where the head's projection
is most of its step. A random-weight target's greedy text would be spread evenly over V ids, which no real text
is; `--text-ids K` scales the unembedding rows past K down (× 0.5), so that its text stays mostly among the first
K ids, as real text stays mostly among a BPE tokenizer's frequent, low ids (docs/heads.md). How much of the text
the N ids held is printed.
Each output is compared with plain `generate`, and every draft of the two γ = 1 runs with the head's own token at
that position (its trace over the same text).

    python benchmarks/mtp_vs_hf.py [--tokens 96] [--repeats 5] [--hidden 256] [--layers 6]
    python benchmarks/mtp_vs_hf.py --families deepseek_v3 --hidden 1024 --layers 8 --vocab 129280 \
        --text-ids 4096 --mtp-vocab 32768 --shape '{"first_k_dense_replace": 8}'
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default="mellum,deepseek_v3")
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--no-train", action="store_true")
    ap.add_argument("--vocab", type=int, default=0, help="the checkpoint's vocabulary size (default: the byte one)")
    ap.add_argument("--text-ids", type=int, default=0,
                    help="scale the unembedding rows past this id down, so the target's text stays below it")
    ap.add_argument("--mtp-vocab", type=int, default=0, help="also race gammatune with the head over N tokens")
    ap.add_argument("--shape", type=json.loads, default=None,
                    help='config fields over the tiny ones, as JSON (e.g. \'{"first_k_dense_replace": 99}\': every '
                         'DeepSeek-V3 layer dense, so the target\'s weights are Linears)')
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    import torch
    import transformers
    from transformers.generation import candidate_generator as cg
    from transformers.modeling_layers import MtpModel

    from gammatune_tui.bench.sim.head_trace import record_head_trace
    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
    from gammatune_tui.engine.drafting import mtp as mtp_module
    from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
    from side_by_side import packed_pair
    from tiny_mtp import VOCAB, train_head, write_mtp_checkpoint

    transformers.utils.logging.set_verbosity_error()
    torch.manual_seed(0)
    print(f"# gammatune --draft mtp vs transformers generate(use_mtp=True), CPU {os.cpu_count()} cores, "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}, transformers {transformers.__version__}, "
          f"hidden {args.hidden}, {args.layers} layers, vocabulary {args.vocab or VOCAB:,}"
          f"{f', text below id {args.text_ids:,}' if args.text_ids else ''}, {args.tokens} tokens, "
          f"{args.repeats} alternating repeats; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    prompt = [0] + list(b"def fibonacci(n):\n    ")
    res: dict = {"tokens": args.tokens, "repeats": args.repeats, "vocab": args.vocab or VOCAB,
                 "text_ids": args.text_ids, "mtp_vocab": args.mtp_vocab, "families": {}}
    reduced = f" | gammatune γ 1, --mtp-vocab {args.mtp_vocab:,} tok/s | × | acceptance | drafts = the whole " \
        "head's" if args.mtp_vocab else ""
    print(f"| family | transformers use_mtp tok/s | gammatune γ 1 tok/s | × | gammatune+ γ0 3 tok/s | acceptance (γ 1) "
          f"| tokens = generate | drafts equal{reduced} |\n|---|---:|---:|---:|---:|---:|---|---"
          f"{'|---:|---:|---:|---' if args.mtp_vocab else ''}|")
    for family in args.families.split(","):
        folder = Path(tempfile.mkdtemp(prefix=f"mtp-vs-hf-{family}-"))
        target = write_mtp_checkpoint(family, folder, seed=3, layers=args.layers, hidden=args.hidden, init=0.3,
                                      shape=args.shape, vocab=args.vocab or VOCAB)
        if args.text_ids:   # the head shares this unembedding (MtpModel.shared_head is the target's lm_head)
            with torch.no_grad():
                target.get_output_embeddings().weight[args.text_ids:] *= 0.5
        target.generation_config.eos_token_id = None
        for p in target.parameters():
            p.requires_grad_(False)
        n = target.config.num_hidden_layers
        # transformers finds a DeepSeek head by the real depth (`model.layers.61`); this one is at depth n
        target._keys_to_ignore_on_load_unexpected = [rf"model\.layers\.{n}.*"] if family == "deepseek_v3" else [r"^mtp\."]
        try:   # the head is read from the folder, once; then the folder goes (MoE checkpoints are large)
            head = mtp_module.load_head(target)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        agree = None
        if not args.no_train:
            # fitted on the benchmark's own prompt (and three prefixes of it), past the tokens decoded: a tiny head
            # memorises rather than generalises, so this is the acceptance of a head that knows this text
            agree = train_head(target, head, [prompt] + [prompt[:8 + 4 * i] for i in range(3)],
                               new_tokens=args.tokens + 4, steps=60)
            for p in head.model.parameters():
                p.requires_grad_(False)
        mtp_module._HEADS[target] = head
        pair, packing = packed_pair(target, "mtp")   # gammatune's copy, packed as load_pair packs it
        mtp_module._HEADS[pair.target] = head
        x = torch.tensor([prompt])
        with torch.inference_mode():
            ref = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False,
                                  max_new_tokens=args.tokens)[0, len(prompt):].tolist()
        theirs: dict[int, int] = {}
        real = cg.MTPCandidateGenerator.get_candidates

        def spy(self, input_ids, *a, **k):
            got, logits = real(self, input_ids, *a, **k)
            if logits is not None:
                theirs[input_ids.shape[1]] = int(got[0, input_ids.shape[1]])
            return got, logits

        def hf_run() -> list[int]:
            # transformers' MTP path builds its head with MtpModel.from_pretrained(target) from the checkpoint:
            # handed the same (fitted) MtpModel instead, so both decoders draft with one head
            loader = MtpModel.__dict__["from_pretrained"]
            MtpModel.from_pretrained = classmethod(lambda cls, main, **kw: head.model)   # type: ignore[method-assign]
            try:
                with torch.inference_mode():
                    return target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, use_mtp=True,
                                           max_new_tokens=args.tokens)[0, len(prompt):].tolist()
            finally:
                MtpModel.from_pretrained = loader

        def ours(method: str, g0: int, n: int = 0) -> tuple[list[int], float, dict[int, int]]:
            dec = SpeculativeDecoder(pair, PolicySettings.build(method, g0), SamplingConfig(),
                                     drafter=DrafterSettings("mtp", mtp_vocab=n) if n else "mtp")
            evs = list(dec.generate(prompt, max_new_tokens=args.tokens))
            drafts, pos = {}, len(prompt)
            for e in evs:
                if isinstance(e, StepEvent):
                    drafts.update({pos + i: t.id for i, t in enumerate(e.drafted)})
                    pos += len(e.emitted)
            return [t.id for e in evs if isinstance(e, StepEvent) for t in e.emitted], \
                evs[-1].accepted / max(1, evs[-1].drafted), drafts

        times: dict[str, list[float]] = {"hf": [], "g1": [], "gplus": [], **({"g1n": []} if args.mtp_vocab else {})}
        outs: dict[str, list[int]] = {}
        acc = acc_n = 0.0
        mine: dict[int, int] = {}
        mine_n: dict[int, int] = {}
        for r in range(args.repeats + 1):   # the first round warms up
            cg.MTPCandidateGenerator.get_candidates = spy
            try:
                t = time.perf_counter()
                outs["hf"] = hf_run()
                dt = time.perf_counter() - t
            finally:
                cg.MTPCandidateGenerator.get_candidates = real
            if r:
                times["hf"].append(dt)
            t = time.perf_counter()
            outs["g1"], acc, mine = ours("specdecode", 1)
            if r:
                times["g1"].append(time.perf_counter() - t)
            t = time.perf_counter()
            outs["gplus"], _, _ = ours("gammatune+", 3)
            if r:
                times["gplus"].append(time.perf_counter() - t)
            if args.mtp_vocab:
                t = time.perf_counter()
                outs["g1n"], acc_n, mine_n = ours("specdecode", 1, args.mtp_vocab)
                if r:
                    times["g1n"].append(time.perf_counter() - t)
        tps = {k: args.tokens / statistics.median(v) for k, v in times.items()}
        same = all(o == ref for o in outs.values())
        # the two decoders draft at different positions (transformers' first step drafts nothing, so at full
        # acceptance the phases differ by one): each draft is held to the head's own first token at that position,
        # from the head's trace over the same text (bench/sim/head_trace.py)
        trace = record_head_trace(pair, "mtp", {}, "p", prompt, args.tokens, 1, pair.eos_ids, tokens=ref)
        first = {len(prompt) + i: c[0] for i, c in enumerate(trace.proposals) if c}
        both = sorted((set(mine) | set(theirs)) & set(first))
        drafts_equal = bool(both) and all(d.get(p, first[p]) == first[p] for d in (mine, theirs) for p in both)
        entry = {"packed": bool(packing), "tokens_per_s": tps, "ratio": tps["g1"] / tps["hf"], "acceptance": acc,
                 "head_training_agreement": agree, "identical": same, "drafts_equal": drafts_equal,
                 "positions_compared": len(both)}
        row_n = ""
        if args.mtp_vocab:
            # the reduced head drafts the whole head's token wherever that token is among its N (the byte tokenizer
            # has no special ids, so S is the first N ids); elsewhere it drafts S's best instead
            drafted = [p for p in mine_n if p in first]
            in_s = [p for p in drafted if first[p] < args.mtp_vocab]
            equal_n = sum(mine_n[p] == first[p] for p in in_s)
            within = sum(t < args.mtp_vocab for t in ref) / len(ref)
            entry["reduced"] = {"tokens_per_s": tps["g1n"], "ratio": tps["g1n"] / tps["hf"], "acceptance": acc_n,
                                "drafts": len(drafted), "drafts_in_s": len(in_s), "drafts_equal": equal_n,
                                "text_within": within}
            row_n = (f" | {tps['g1n']:.1f} | {tps['g1n'] / tps['hf']:.2f} | {acc_n:.2f} | {equal_n} of {len(in_s)} "
                     f"whose token is among the N (text among the N: {within:.0%})")
        res["families"][family] = entry
        print(f"| {family}{' (packed verify)' if packing else ''} | {tps['hf']:.1f} | {tps['g1']:.1f} | "
              f"{tps['g1'] / tps['hf']:.2f} | {tps['gplus']:.1f} | {acc:.2f} | {'yes' if same else 'NO'} | "
              f"{'yes' if drafts_equal else 'NO'} ({len(both)} positions){row_n} |", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
