"""gammatune's `--draft dflash:PATH` against transformers' `generate(assistant_model=…, speculation_type="dflash")`,
side by side in one run (issue 45's goal: identical output, and gammatune at least 1.2× tokens/s at the same γ).

A Llama target with random weights (`--hidden` wide, `--layers` deep, the byte vocabulary) and a DFlash drafter
(transformers' `muse_glimmer_assistant`: one layer, block `--block`, reading two target layers) fitted for
`--train-steps` steps on the target's greedy text of the prompt (tests/tiny_dflash.py; about two minutes at the
default shape, on every core), so that most of each block is accepted, as with a released drafter. transformers
fixes γ to the block less its anchor (block − 1) and drafts nothing on its first step; gammatune runs specdecode
at that γ, one block a step. Then, alternating, `--repeats` times each (after one warm-up round):
- transformers: `target.generate(x, do_sample=False, assistant_model=drafter, speculation_type="dflash")`;
- gammatune: `SpeculativeDecoder(pair, specdecode γ0 = block − 1, drafter="dflash")`, the same drafter;
- gammatune's own policy (gammatune+, γ0 = block − 1), for reference.
gammatune's side runs what `load_pair` loads (a float32 CPU target verifies through packed weights where that
pays, docs/precision.md); transformers keeps its own unpacked copy. Each output is compared with plain `generate`.

    python benchmarks/dflash_vs_hf.py [--tokens 64] [--repeats 3] [--hidden 1024] [--layers 12] [--block 8]
                                     [--train-steps 200] [--json FILE]
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from side_by_side import arguments, ours, packed_pair, race  # noqa: E402


def main() -> None:
    ap = arguments(__doc__, tokens=64, repeats=3, hidden=1024, layers=12)
    ap.add_argument("--block", type=int, default=8)
    ap.add_argument("--init", type=float, default=1.0, help="the target's weight scale (small: repetitive text)")
    ap.add_argument("--train-steps", type=int, default=200,
                    help="the drafter's fitting steps (fewer: lower acceptance)")
    args = ap.parse_args()
    import torch
    import transformers
    from transformers import AutoModel

    from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
    from tiny_dflash import train_dflash, write_dflash
    from tiny_models import make_llama

    transformers.utils.logging.set_verbosity_error()
    prompt = [0] + list(b"def fibonacci(n):\n    ")
    gamma = args.block - 1
    target = make_llama(260, seed=1, hidden=args.hidden, layers=args.layers, init=args.init, eos=None)
    folder = Path(tempfile.mkdtemp(prefix="dflash-vs-hf-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    ids = (1, args.layers - 2)
    write_dflash(folder, target, layer_ids=ids, block_size=args.block, init=0.02)
    threads = torch.get_num_threads()
    torch.set_num_threads(os.cpu_count() or 1)   # the fitting on every core; the race on the threads asked for
    train_dflash(target, folder, [prompt], new=args.tokens + args.block, steps=args.train_steps)
    torch.set_num_threads(threads)
    drafter = AutoModel.from_pretrained(str(folder)).eval()
    pair, packing = packed_pair(target, "dflash")
    settings = DrafterSettings("dflash", dflash_head=str(folder))
    race(target, prompt, {"assistant_model": drafter, "speculation_type": "dflash"},
         lambda method: ours(pair, method, gamma, settings, prompt, args.tokens),
         title="gammatune --draft dflash vs transformers generate(speculation_type='dflash')",
         shape=f"target hidden {args.hidden}, {args.layers} layers, block {args.block} (γ {gamma}), drafter reads "
               f"layers {ids}", args=args, packed=bool(packing))


if __name__ == "__main__":
    main()
