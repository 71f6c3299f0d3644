"""What loading spends on the runners' self-checks and on the warm-up (issue 19 row 4).

For the demo pair and for a random-weight Llama of SmolLM2-135M's shape (hidden 576, 30 layers,
9 heads, 3 KV heads, intermediate 1536, vocabulary 49152, tied embeddings; built from a config, so
nothing is downloaded), this times, once each on a fresh pair: resolving the runners (`runner_pool(pair).label`:
the self-checks of every static/graphs runner the engine picks) and `warm_up(pair)`. One torch thread;
wall time and process CPU time (the steadier figure on a shared machine).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/self_check_cost.py [--engine auto] [--skip-135m]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from gammatune_tui.engine.loading.models import ModelPair, load_pair  # noqa: E402
from gammatune_tui.engine.loading.warmup import warm_up  # noqa: E402


def smollm2_shape() -> ModelPair:
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                      num_attention_heads=9, num_key_value_heads=3, tie_word_embeddings=True,
                      max_position_embeddings=8192, bos_token_id=0, eos_token_id=1)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).eval()
    demo = load_pair(demo=True, device="cpu", warmup=False, drafter="prompt-lookup")
    return ModelPair(target=model, draft=None, tokenizer=demo.tokenizer, device=torch.device("cpu"),
                     dtype=torch.float32, eos_ids=frozenset({1}), drafter=demo.drafter)


def measure(name: str, pair: ModelPair, engine: str) -> None:
    from gammatune_tui.engine.runners import RunnerPool

    pair.engine = engine
    pair.runner_pool = RunnerPool(pair.target, pair.draft, engine)  # fresh: nothing checked yet
    t0, c0 = time.perf_counter(), time.process_time()
    label = pair.runner_pool.label
    checks, checks_cpu = time.perf_counter() - t0, time.process_time() - c0
    t1, c1 = time.perf_counter(), time.process_time()
    warm_up(pair)
    warm, warm_cpu = time.perf_counter() - t1, time.process_time() - c1
    print(f"{name:<28} runner {label:<8} self-checks {checks:6.2f} s (CPU {checks_cpu:5.2f} s)   "
          f"warm-up {warm:6.2f} s (CPU {warm_cpu:5.2f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--skip-135m", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"# {platform.machine()} {os.cpu_count()} cores, torch {torch.__version__}, load {os.getloadavg()[0]:.2f}")
    demo = load_pair(demo=True, device="cpu", warmup=False, engine=args.engine)
    measure("demo pair", demo, args.engine)
    if not args.skip_135m:
        measure("SmolLM2-135M shape (random)", smollm2_shape(), args.engine)


if __name__ == "__main__":
    main()
