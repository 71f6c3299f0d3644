"""The recipe that builds the embedded demo pair: `python -m gammatune_tui.demo.train`.

Plain PyTorch, seeded, runs on CPU (uses CUDA when present). Stages:
tokenizer (byte-level BPE on the stdlib corpus) → target → draft; each model
directory ends up complete (config, generation config, fp16 safetensors,
tokenizer files, and `recipe.json` with what the run measured) so that
`AutoModelForCausalLM` / `AutoTokenizer.from_pretrained(dir)` work offline.
See docs/demo-pair.md for the exact command that produced the shipped pair.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch
import torch.nn.functional as F

from . import PAIR_DIR
from .configs import llama_config
from .corpus import Corpus, load_corpus
from .tokenizer import DEFAULT_VOCAB, byte_lengths, train_bpe

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerFast


@dataclass
class TrainSettings:
    shape: str
    steps: int
    batch_size: int = 16
    seq_len: int = 256
    lr: float = 2e-3
    warmup: int = 100
    weight_decay: float = 0.1
    eval_every: int = 250
    eval_windows: int = 48
    log_every: int = 25
    seed: int = 0
    max_minutes: float | None = None
    bf16: bool = False
    init_from: str | None = None
    stop_after: int | None = None


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))


def ensure_tokenizer(out: Path, corpus: Corpus, vocab_size: int) -> Any:
    """Load the pair's tokenizer if a stage already made it, else train it and save it into both model dirs."""
    from transformers import AutoTokenizer

    for sub in ("target", "draft"):
        if (out / sub / "tokenizer.json").exists():
            tok = AutoTokenizer.from_pretrained(out / sub)
            for other in ("target", "draft"):
                if not (out / other / "tokenizer.json").exists():
                    tok.save_pretrained(out / other)
            return tok
    t0 = time.time()
    tok = train_bpe(corpus.train, vocab_size)
    for sub in ("target", "draft"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        tok.save_pretrained(out / sub)
    log(f"tokenizer: vocab {len(tok)} trained in {time.time() - t0:.1f}s")
    return tok


def encode_docs(tok: PreTrainedTokenizerFast, docs: list[str]) -> torch.Tensor:
    """One token stream: <bos> doc <eos> <bos> doc <eos> ..."""
    ids: list[int] = []
    for enc in tok.backend_tokenizer.encode_batch(docs, add_special_tokens=False):
        ids.append(tok.bos_token_id)
        ids.extend(enc.ids)
        ids.append(tok.eos_token_id)
    return torch.tensor(ids, dtype=torch.long)


def lr_at(step: int, s: TrainSettings) -> float:
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    progress = (step - s.warmup) / max(1, s.steps - s.warmup)
    return s.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


@torch.no_grad()
def evaluate(model: PreTrainedModel, val: torch.Tensor, nbytes: torch.Tensor, s: TrainSettings, device: torch.device) -> tuple[float, float]:
    """(mean loss in nats/token, bits per UTF-8 byte) over fixed non-overlapping validation windows."""
    model.eval()
    w = s.seq_len + 1
    n = min(s.eval_windows, max(1, (len(val) - 1) // w))
    total_nats = 0.0
    total_tokens = 0
    total_bytes = 0
    for i in range(n):
        chunk = val[i * w : (i + 1) * w]
        if len(chunk) < 2:
            break
        x, y = chunk[:-1].unsqueeze(0).to(device), chunk[1:].unsqueeze(0).to(device)
        logits = model(input_ids=x).logits.float()
        total_nats += F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), reduction="sum").item()
        total_tokens += y.numel()
        total_bytes += int(nbytes[chunk[1:]].sum())
    model.train()
    loss = total_nats / max(1, total_tokens)
    return loss, total_nats / math.log(2) / max(1, total_bytes)


def train_model(name: str, tok: PreTrainedTokenizerFast, train_ids: torch.Tensor, val_ids: torch.Tensor,
                s: TrainSettings, device: torch.device) -> tuple[PreTrainedModel, dict[str, Any]]:
    from transformers import LlamaForCausalLM

    seed_everything(s.seed)
    config = llama_config(s.shape, len(tok), tok.bos_token_id, tok.eos_token_id, max_positions=1024)
    if s.init_from:
        # a second stage: continue from saved weights with a fresh schedule (and optimizer)
        model = LlamaForCausalLM.from_pretrained(s.init_from, dtype=torch.float32)
        # `to` moves the model in place; transformers types its override of `to` without binding self, so the
        # call is typed as torch's Module.to (the model's own override still runs)
        cast(torch.nn.Module, model).to(device)
        if model.config.hidden_size != config.hidden_size or model.config.num_hidden_layers != config.num_hidden_layers:
            raise SystemExit(f"--init-from {s.init_from}: not a {s.shape!r} model")
        log(f"{name}: continuing from {s.init_from}")
    else:
        model = LlamaForCausalLM(config)
        cast(torch.nn.Module, model).to(device)   # in place (see above)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{name}: shape {s.shape}, {n_params:,} params, {s.steps} steps × {s.batch_size}×{s.seq_len} tokens, device {device}")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": s.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=s.lr, betas=(0.9, 0.95),
    )
    nbytes = torch.tensor(byte_lengths(tok), dtype=torch.long)
    gen = torch.Generator().manual_seed(s.seed)
    w = s.seq_len + 1
    t0 = time.time()
    ema: float | None = None
    history = []
    steps_done = 0
    for step in range(s.steps):
        starts = torch.randint(0, len(train_ids) - w, (s.batch_size,), generator=gen)
        batch = torch.stack([train_ids[i : i + w] for i in starts.tolist()]).to(device)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, s)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=s.bf16):
            logits = model(input_ids=batch[:, :-1]).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        steps_done = step + 1
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        elapsed = time.time() - t0
        if steps_done % s.log_every == 0 or steps_done == s.steps:
            tps = steps_done * s.batch_size * s.seq_len / max(elapsed, 1e-9)
            log(f"{name}: step {steps_done}/{s.steps} loss {ema:.3f} lr {lr_at(step, s):.2e} {elapsed:.0f}s {tps:.0f} tok/s")
        if s.eval_every and steps_done % s.eval_every == 0 and steps_done < s.steps:
            vl, bpb = evaluate(model, val_ids, nbytes, s, device)
            history.append({"step": steps_done, "train_loss": round(ema, 4), "val_loss": round(vl, 4),
                            "val_bits_per_byte": round(bpb, 4), "seconds": round(elapsed, 1)})
            log(f"{name}: step {steps_done} val loss {vl:.3f} val {bpb:.3f} bits/byte")
        if s.stop_after is not None and steps_done >= s.stop_after:
            log(f"{name}: stopping after step {steps_done} as asked (--stop-after)")
            break
        if s.max_minutes is not None and elapsed > s.max_minutes * 60:
            log(f"{name}: stopping early at step {steps_done}: over --max-minutes {s.max_minutes}")
            break
    wall = time.time() - t0
    if ema is None:   # no step ran (a budget of none): NaN, not a crash in round()
        ema = math.nan
    vl, bpb = evaluate(model, val_ids, nbytes, s, device)
    log(f"{name}: done: {steps_done} steps in {wall:.0f}s, train loss {ema:.3f}, val loss {vl:.3f}, val {bpb:.3f} bits/byte")
    history.append({"step": steps_done, "train_loss": round(ema, 4), "val_loss": round(vl, 4),
                    "val_bits_per_byte": round(bpb, 4), "seconds": round(wall, 1)})
    stats = {"params": n_params, "steps": steps_done, "wall_seconds": round(wall, 1), "train_loss": round(ema, 4),
             "val_loss": round(vl, 4), "val_bits_per_byte": round(bpb, 4), "history": history}
    return model, stats


def save_model(model: PreTrainedModel, tok: PreTrainedTokenizerFast, out_dir: Path, recipe: dict) -> None:
    """fp16 safetensors + config + generation config (bos/eos) + tokenizer + recipe.json."""
    from transformers import GenerationConfig

    out_dir.mkdir(parents=True, exist_ok=True)
    cast(torch.nn.Module, model).to("cpu", dtype=torch.float16)   # in place (typed as in train_model)
    model.generation_config = GenerationConfig(
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id,
    )
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    (out_dir / "recipe.json").write_text(json.dumps(recipe, indent=2) + "\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m gammatune_tui.demo.train", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=PAIR_DIR, help="pair directory (gets target/ and draft/)")
    p.add_argument("--stage", choices=["all", "tokenizer", "target", "draft"], default="all")
    p.add_argument("--max-bytes", type=int, default=None, help="use only the first N bytes of the corpus")
    p.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB)
    p.add_argument("--target-steps", type=int, default=3000)
    p.add_argument("--draft-steps", type=int, default=3000)
    p.add_argument("--target-shape", default="target")
    p.add_argument("--draft-shape", default="draft")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--target-lr", type=float, default=2e-3)
    p.add_argument("--draft-lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-windows", type=int, default=48)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    p.add_argument("--device", default="auto", help="auto (CUDA if present, else CPU), cpu, cuda")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast for training steps (≈1.5× faster on CPUs with AVX512-BF16)")
    p.add_argument("--init-from", type=Path, default=None, help="continue training from this model dir (a second stage)")
    p.add_argument("--stop-after", type=int, default=None,
                   help="stop after this many steps, keeping the schedule of --target/--draft-steps "
                        "(reproduces a run that --max-minutes cut short)")
    p.add_argument("--max-minutes", type=float, default=None, help="safety cap per model (stops early; not reproducible)")
    p.add_argument("--tiny", action="store_true", help="tiny shapes, corpus slice and steps: proves the recipe in seconds")
    args = p.parse_args(argv)
    if args.tiny:
        args.target_shape, args.draft_shape = "tiny-target", "tiny-draft"
        args.max_bytes = args.max_bytes or 200_000
        args.target_steps = min(args.target_steps, 4)
        args.draft_steps = min(args.draft_steps, 4)
        args.batch_size, args.seq_len, args.warmup = 2, 32, 2
        args.eval_every, args.eval_windows, args.log_every = 0, 2, 1
        args.vocab_size = min(args.vocab_size, 512)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    seed_everything(args.seed)
    t0 = time.time()
    corpus = load_corpus(max_bytes=args.max_bytes)
    log(f"corpus: {corpus.files} stdlib files from {corpus.root}: train {corpus.train_bytes:,} bytes "
        f"({len(corpus.train)} files), val {corpus.val_bytes:,} bytes ({len(corpus.val)} files)")
    out: Path = args.out
    tok = ensure_tokenizer(out, corpus, args.vocab_size)
    if args.stage == "tokenizer":
        return 0
    train_ids = encode_docs(tok, corpus.train)
    val_ids = encode_docs(tok, corpus.val)
    log(f"tokens: train {len(train_ids):,} ({corpus.train_bytes / len(train_ids):.2f} bytes/token), val {len(val_ids):,}")
    base = {"corpus_files": corpus.files, "corpus_train_bytes": corpus.train_bytes, "corpus_val_bytes": corpus.val_bytes,
            "train_tokens": len(train_ids), "vocab_size": len(tok), "python": sys.version.split()[0],
            "torch": torch.__version__, "threads": args.threads, "device": str(device)}
    stages = ["target", "draft"] if args.stage == "all" else [args.stage]
    for name in stages:
        s = TrainSettings(
            shape=args.target_shape if name == "target" else args.draft_shape,
            steps=args.target_steps if name == "target" else args.draft_steps,
            batch_size=args.batch_size, seq_len=args.seq_len,
            lr=args.target_lr if name == "target" else args.draft_lr,
            warmup=args.warmup, eval_every=args.eval_every, eval_windows=args.eval_windows,
            log_every=args.log_every, seed=args.seed, max_minutes=args.max_minutes, bf16=args.bf16,
            init_from=str(args.init_from) if args.init_from else None, stop_after=args.stop_after,
        )
        model, stats = train_model(name, tok, train_ids, val_ids, s, device)
        save_model(model, tok, out / name, {**base, "settings": asdict(s), **stats,
                                            "command": "python -m gammatune_tui.demo.train " + " ".join(sys.argv[1:])})
        log(f"{name}: saved to {out / name}")
    log(f"all done in {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
