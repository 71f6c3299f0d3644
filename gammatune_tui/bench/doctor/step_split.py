"""Where a head's drafting step goes: its parts timed apart on the pair doctor examines.

"MTP is slower than plain at 96 % acceptance" (vLLM #39680) is a question of
costs: at Qwen3.5-0.8B's shape most of a head's step is its projection over
the whole vocabulary, not its layer. The doctor's cost table gives a source's
time per drafted token; this splits it by the parts the source names
(`DraftSource.step_parts`: for MTP, the head's layer and its projection over
the vocabulary, FR-Spec's N tokens with --mtp-vocab; for the Gemma 4
assistant, its layers and its map into the vocabulary), each timed on its own,
the median of a few runs after a warm-up, with the source fed the rows of one
target pass over the prompt, as the decoder feeds it (and, for a source that
reads the target's keys and values, the cache of that pass).
"""

from __future__ import annotations

import statistics
import time

from ...engine.common.pair import ModelPair
from ...engine.common.sampling import Served
from ...engine.common.sampling_config import SamplingConfig
from ...engine.drafting import SourceContext
from ...engine.drafting.draft_sources import make_source

REPEATS = 7


def step_split(pair: ModelPair, ids: list[int], repeats: int = REPEATS) -> dict[str, float]:
    """Milliseconds of each part of one drafting step of the pair's source after `ids` ({}: a source that names
    no parts, or a draft model's)."""
    import torch

    from transformers import DynamicCache

    from ...engine.runners.base import layer_kv
    from ...engine.runners.hf_compat import cache_kw
    from ...engine.runners.hidden import Tapper, TargetRows

    if pair.draft is not None or len(ids) < 2:
        return {}
    source = make_source(pair.drafter, SourceContext(pair, None, None, None))
    reads = source.reads
    if reads is None:
        return {}
    tapper = Tapper(pair.target, reads)
    cache = DynamicCache() if reads.kv else None   # a source of keys and values (the Gemma 4 assistant) reads them
    with torch.inference_mode():
        with tapper.pass_of(len(ids) - 1):
            pair.target(input_ids=torch.tensor([ids[:-1]], device=pair.device),
                        **(cache_kw(pair.target, cache) if cache is not None else {}), use_cache=cache is not None)
        assert tapper.rows is not None
        kv = tuple(layer_kv(cache.layers[layer]) for layer in reads.kv) if cache is not None else ()
        source.observe(TargetRows(0, tapper.rows, kv))
        parts = source.step_parts(ids, Served(SamplingConfig()))
        times: dict[str, list[float]] = {name: [] for name in parts}
        for r in range(repeats + 2):   # two warm-ups; the parts alternate, so drift hits each alike
            for name, run in parts.items():
                t = time.perf_counter()
                run()
                if r >= 2:
                    times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) * 1000 for name, ts in times.items()}


def split_line(parts: dict[str, float], verify_ms: dict[int, float]) -> str:
    """'a drafting step: the head's layer 2.1 ms, its projection over 248,320 tokens 9.8 ms (82 %); the target's
    one-token pass 45.0 ms'."""
    total = sum(parts.values()) or 1.0
    line = "a drafting step: " + ", ".join(f"{name} {ms:.1f} ms ({ms / total:.0%})" for name, ms in parts.items())
    return line + (f"; the target's one-token pass {verify_ms[1]:.1f} ms" if verify_ms.get(1) else "")


__all__ = ["split_line", "step_split"]
