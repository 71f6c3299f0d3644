"""gammatune's `--draft gemma4-assistant` against transformers' `generate(assistant_model=…)`, side by side in one run
(issue 45's goal: identical output, and gammatune at least 1.2× tokens/s at the same γ).

A small Gemma 4 text target (random weights, `--hidden` wide, `--layers` layers, the last third reusing the keys
of the layers before, as E2B's do) and an assistant trained for a few seconds on its greedy text
(tests/tiny_gemma4.py), so that acceptance is high, as with a released assistant. Then, alternating, `--repeats`
times each (after one warm-up round):
- transformers: `target.generate(x, do_sample=False, assistant_model=assistant)`, γ fixed by the assistant's
  `num_assistant_tokens` (`--gamma`);
- gammatune: `SpeculativeDecoder(pair, specdecode γ0 = γ, drafter="gemma4-assistant")`, the same γ and assistant;
- gammatune's own policy (gammatune+, γ0 = γ), for reference.
Each output is compared with plain `generate`.

    python benchmarks/assistant_vs_hf.py [--tokens 96] [--repeats 5] [--hidden 256] [--layers 6] [--gamma 3]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from side_by_side import arguments, ours, packed_pair, race  # noqa: E402


def main() -> None:
    ap = arguments(__doc__, tokens=96, repeats=5, hidden=256, layers=6)
    ap.add_argument("--gamma", type=int, default=3)
    args = ap.parse_args()
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
    from tiny_gemma4 import VOCAB, train_assistant, write_assistant

    transformers.utils.logging.set_verbosity_error()
    prompt = [0] + list(b"def fibonacci(n):\n    ")
    kinds = ["full_attention" if (i + 1) % 3 == 0 else "sliding_attention" for i in range(args.layers)]
    cfg = AutoConfig.for_model(
        "gemma4_text", vocab_size=VOCAB, vocab_size_per_layer_input=VOCAB, hidden_size_per_layer_input=16,
        hidden_size=args.hidden, intermediate_size=2 * args.hidden, num_hidden_layers=args.layers,
        num_attention_heads=4, num_key_value_heads=2, head_dim=args.hidden // 4, global_head_dim=args.hidden // 4,
        layer_types=kinds, sliding_window=512, num_kv_shared_layers=args.layers // 3, initializer_range=1.0 / 8,
        pad_token_id=0, bos_token_id=0, eos_token_id=None, tie_word_embeddings=False)
    torch.manual_seed(2)
    target = AutoModelForCausalLM.from_config(cfg).eval()
    target.generation_config.eos_token_id = None
    folder = Path(tempfile.mkdtemp(prefix="assistant-vs-hf-"))
    try:
        write_assistant(folder, target, gamma=args.gamma, hidden=64, layers=2)
        train_assistant(target, folder, [prompt] + [prompt[:8 + 4 * i] for i in range(3)], new=args.tokens + 4)
        assistant = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
        assistant.generation_config.num_assistant_tokens = args.gamma
        pair, packing = packed_pair(target, "assistant")
        drafter = DrafterSettings("gemma4-assistant", assistant_head=str(folder))
        race(target, prompt, {"assistant_model": assistant},
             lambda method: ours(pair, method, args.gamma, drafter, prompt, args.tokens),
             title="gammatune --draft gemma4-assistant vs transformers generate(assistant_model=…)",
             shape=f"target hidden {args.hidden}, {args.layers} layers, γ {args.gamma}", args=args,
             packed=bool(packing))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
