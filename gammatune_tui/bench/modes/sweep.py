"""`gammatune bench` without --latency: load the pair, run the sweep live or simulated, write JSON and CSV."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.text import Text

from ...engine.common.pair import ModelPair
from ...engine.context import context_window
from ...engine.loading.models import load_pair
from ...errors import ContextTooLong, Interrupted
from ...prompts import Prompt
from ..live import protocol
from ..report import files
from .live import run_live
from .simulate import SimulateOptions, run_simulate


def check_prompts_fit(pair: ModelPair, pid: Sequence[protocol.PromptIds], max_new_tokens: int) -> None:
    """Every prompt + --max-new-tokens must fit the pair's context; the first that does not is named."""
    window = context_window(pair)
    if window is None:
        return
    for p in pid:
        try:
            window.check(len(p.ids), max_new_tokens)
        except ContextTooLong as exc:
            raise ContextTooLong(f"prompt {p.id}: {exc}", prompt_tokens=exc.prompt_tokens,
                                 max_new_tokens=exc.max_new_tokens, limit=exc.limit) from None


def run_sweep(console: Console, err: Console, cfg: protocol.SweepConfig, prompts: Sequence[Prompt], *,
              prompt_set: str, load_kwargs: dict[str, Any], raw: bool, out: Path,
              simulate: SimulateOptions | None = None) -> None:
    """Every method × γ0 on every prompt (live, or simulated with `simulate`), reported and saved to `out`."""
    with err.status("loading models…"):
        pair = load_pair(**load_kwargs)
    pid = [protocol.PromptIds(p.id, pair.encode_prompt(p.text, raw=raw)) for p in prompts]
    check_prompts_fit(pair, pid, cfg.max_new_tokens)
    label = f"{pair.name_target} / {pair.name_draft}"
    payload: dict[str, Any] = {
        "schema": 1,
        "created": time.time(),
        "command": ["gammatune", *sys.argv[1:]],
        "environment": protocol.environment(pair),
        "config": {"methods": cfg.methods, "gammas": cfg.gammas, "max_new_tokens": cfg.max_new_tokens,
                   "repeats": cfg.repeats, "params": cfg.params, "prompts": prompt_set,
                   "prompt_ids": [p.id for p in pid], "prompt_lengths": [len(p.ids) for p in pid], "seed": cfg.seed,
                   "greedy": cfg.sampling.greedy, "sampling": cfg.sampling.to_json(),
                   "std": "population (ddof=0) across γ0"},
    }
    if simulate is not None:
        run_simulate(console, err, pair, pid, cfg, label, payload, out, simulate,
                     categories={p.id: p.category for p in prompts})
    else:
        run_live(console, err, pair, pid, cfg, label, payload, out)
    files.write_json(out, payload)
    err.print(Text(f"wrote {out} and {files.csv_path_for(out)}"))
    checks = payload.get("live", {}).get("checks", {})
    if checks.get("interrupted"):   # Ctrl+C in the live sweep: the rows it finished are reported and saved
        raise Interrupted(f"{checks['runs']} of {cfg.run_count(len(pid))} runs finished; {out} and "
                          f"{files.csv_path_for(out)} hold them")
