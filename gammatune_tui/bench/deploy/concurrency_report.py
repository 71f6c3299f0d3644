"""What `doctor --batch` prints: the best K at each batch size, where speculation stops paying, and the two
engines' own per-batch-size settings to paste (vLLM's table, SGLang's adaptive tiers)."""

from __future__ import annotations

import json
import math
import shlex

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...engine.common.names import is_self_draft
from .concurrency import PAYS_ABOVE, Concurrency


def _x(v: float) -> str:
    return f"{v:.2f}×" if math.isfinite(v) else "—"


def table(c: Concurrency) -> Table:
    t = Table(title="Speculation under concurrency (fixed K, the traces' acceptance, prices at each batch size)",
              title_justify="left")
    for name in ("batch", "best K", "speed-up", "± timing", "prompts", "K tied with it"):
        t.add_column(name, justify="right" if name != "K tied with it" else "left", no_wrap=name != "K tied with it")
    for b in c.batches:
        best = c.best(b)
        top = max((c.cells[(b, k)] for k in c.ks), key=lambda x: x.speedup, default=None)
        shown = best if best.k else top
        label = str(best.k) if best.k else f"0 (best K={top.k})" if top else "0"
        t.add_row(str(b), label, _x(shown.speedup) if shown else "1.00×",
                  f"{shown.spread:.2f}" if shown and shown.spread else "—",
                  f"{_x(shown.lo)}–{_x(shown.hi)}" if shown else "—",
                  ", ".join(str(k) for k in c.ties(b)))
    return t


def lines(c: Concurrency, target: str, draft: str, engines: set[str]) -> list[Text]:
    out = []
    cross = c.crossover()
    where = f"batch {c.batches[0]}–{c.batches[-1]}"
    if cross is None:
        out.append(Text(f"Speculation pays at every batch size asked ({where}); the largest gains are at "
                        f"batch {max(c.batches, key=lambda b: c.best(b).speedup)}."))
    elif cross == c.batches[0]:
        out.append(Text(f"Speculation does not pay at any batch size asked ({where}): serve without it."))
    else:
        prev = c.batches[c.batches.index(cross) - 1]
        out.append(Text(f"Speculation stops paying between batch {prev} and {cross}: from {cross} on, every K is at "
                        f"or below {PAYS_ABOVE:.0f}× the target alone here."))
    for note in c.notes:
        out.append(Text(f"note: {note}", style="yellow"))
    if "vllm" in engines:
        sched = c.vllm_schedule()
        kmax = max(k for _, _, k in sched)
        if kmax == 0:
            out.append(Text("vLLM: no K pays at these batch sizes; leave --speculative-config out."))
        elif is_self_draft(draft):
            out.append(Text("vLLM, K by batch size (the last K holds for every larger batch), in --speculative-config "
                            f"beside a 4-bit checkpoint of the target as the draft model (vLLM has no {draft}): "
                            f'"num_speculative_tokens": {kmax}, "num_speculative_tokens_per_batch_size": '
                            f"{json.dumps(sched)}"))
        else:
            cfg = {"model": draft, "method": "draft_model", "num_speculative_tokens": kmax,
                   "num_speculative_tokens_per_batch_size": sched}
            out.append(Text("vLLM, K by batch size (the last K holds for every larger batch):"))
            out.append(Text(f"vllm serve {shlex.quote(target)} --speculative-config {shlex.quote(json.dumps(cfg))}"))
    if "sglang" in engines:
        out.append(Text("SGLang adaptive tiers (save as tiers.json; run with --speculative-adaptive "
                        "--speculative-adaptive-config tiers.json):"))
        out.append(Text(json.dumps(c.sglang_tiers())))
        out.append(Text("  SGLang adapts only EAGLE/EAGLE3 drafts (adaptive_unsupported_reason); with a draft model "
                        "(STANDALONE) it falls back to the fixed --speculative-num-steps: take the K of your usual "
                        "batch size.", style="dim"))
    if c.costs.given:
        priced = ("your --batch-costs (forwards and each step's overhead)" if any(c.costs.overhead_s.values())
                  else "your --batch-costs from the forwards alone")
    else:
        priced = (f"this machine, {c.costs.rounds} timing rounds of the batched step itself (its forwards and the "
                  "work around them)")
    out.append(Text(f"Priced with {priced}: scheduling, prefill (its own and interleaved with decode) and unequal "
                    "request lengths are left out (docs/deploy.md, docs/benchmarks-concurrency.md).", style="dim"))
    return out


def print_concurrency(console: Console, c: Concurrency, target: str, draft: str, engines: set[str]) -> None:
    console.print(table(c))
    for line in lines(c, target, draft, engines):
        console.print(line, soft_wrap=True)   # a command stays one line: it pastes as it is


__all__ = ["lines", "print_concurrency", "table"]
