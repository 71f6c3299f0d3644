"""How much of a text a reduced draft vocabulary covers (`--mtp-vocab N`, engine/drafting/frspec.py).

A token outside the draft vocabulary S can never be drafted, so the share of a text's tokens inside S
bounds how often the head can propose the right token. This compares the two rankings `--mtp-vocab`
offers: by token id (the default: BPE merge order as a frequency proxy, the special tokens first) and
by counts over other text of the same kind (`--mtp-vocab-file TEXT`). The files are split in two
halves, alternately: the counts come from one half, and both rankings are scored on the other.

    python benchmarks/vocab_coverage.py --tokenizer FOLDER --sizes 2048,8192 docs/*.md
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", required=True, help="a folder (or hub id) with the target's tokenizer")
    ap.add_argument("--sizes", default="2048,4096,8192,16384")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    from transformers import AutoTokenizer

    from gammatune_tui.engine.drafting.frspec import ranked_subset, special_ids

    tok = AutoTokenizer.from_pretrained(args.tokenizer)
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in sorted(args.files)]
    counted = tok.encode("\n".join(texts[0::2]), add_special_tokens=False)
    scored = tok.encode("\n".join(texts[1::2]), add_special_tokens=False)
    counts = Counter(counted)
    by_count = tuple(sorted(counts, key=lambda i: (-counts[i], i)))
    first = special_ids(tok, [tok.eos_token_id] if tok.eos_token_id is not None else [])
    width = len(tok)
    print(f"# {args.tokenizer}: {width:,} tokens; {len(args.files)} files, counted on {len(counted):,} tokens "
          f"({len(counts):,} distinct), scored on {len(scored):,}\n")
    print("| N | share of the vocabulary | covered, ranked by id | covered, ranked by counts |\n|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        ids = set(ranked_subset(n, width, first).tolist())
        counted_ids = set(ranked_subset(n, width, tuple(dict.fromkeys(first + by_count))).tolist())
        share = [sum(i in s for i in scored) / len(scored) for s in (ids, counted_ids)]
        print(f"| {n:,} | {n / width:.1%} | {share[0]:.1%} | {share[1]:.1%} |")


if __name__ == "__main__":
    main()
