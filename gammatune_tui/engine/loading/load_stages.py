"""Where a model load's time goes, stage by stage: imports, GGUF conversion, tokenizer, weights, self-checks, warm-up.

A real model took 14–28 s before the app was usable, and nothing said why.
`load_pair` times each stage with a `StageClock` (`pair.load_s`), the session
header carries the numbers, and the chat subtitle and `run`'s header show
them through `load_stages_text`. Pure Python: the UI and the printer import
it without torch.
"""

from __future__ import annotations

import time

LOAD_STAGES = ("imports", "conversion", "tokenizer", "weights", "self-checks", "warm-up")


class StageClock:
    """Seconds per loading stage (LOAD_STAGES), in the order they ran."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        """The time since the last lap goes to `stage` (an empty name drops it)."""
        now = time.perf_counter()
        if stage:
            self.stages[stage] = self.stages.get(stage, 0.0) + now - self._t
        self._t = now


def load_stages_text(stages: dict[str, float]) -> str:
    """'loaded in 9.8 s: imports 4.1 · weights 2.0 · self-checks 2.9 · warm-up 0.8 s' (stages under 0.05 s left out;
    '' when nothing was timed)."""
    if not stages:
        return ""
    shown = [(k, v) for k, v in stages.items() if v >= 0.05]
    total = f"loaded in {sum(stages.values()):.1f} s"
    return f"{total}: {' · '.join(f'{k} {v:.1f}' for k, v in shown)} s" if shown else total


__all__ = ["LOAD_STAGES", "StageClock", "load_stages_text"]
