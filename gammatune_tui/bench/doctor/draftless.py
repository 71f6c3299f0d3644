"""Doctor's candidates that draft without a draft model: prompt lookup, the n-gram pool, an MTP or EAGLE-3 head.

Under greedy decoding each is measured as `bench --simulate` measures it:
from its own trace kind (bench/sim/trace_kinds.py; a head's chain from every
position, prompt lookup's proposal), which replays its live sessions step
for step, then priced by the same timing pass as a draft model. Sampled, such
a source has no trace that its runs can share (its proposals depend on where
each window starts, and a head's on its own draws), so its row is refused
with where it is measured instead: `compare --drafters`, live.
"""

from __future__ import annotations

from typing import Any

from ...engine.common.names import BY_SOURCE, head_source
from ...engine.common.pair import ModelPair
from ..sim import simulate as sim
from ..sim.sim_trace import ChainTrace
from ..sim.trace_kinds import kind_of, trace_kind


def source_without_model(path: str) -> str | None:
    """The draft source a `--draft` value names when it drafts without a draft model (prompt lookup, the
    n-gram pool, `mtp`, `eagle3:PATH`), else None."""
    head = head_source(path)
    if head is not None:
        return head[0]
    spec = BY_SOURCE.get(path.strip().lower())
    return spec.name if spec is not None and not spec.loads_draft else None


def load_args(path: str) -> dict[str, Any]:
    """`load_pair`'s draft arguments for a candidate: a source named by its name (`prompt-lookup`, `mtp`) loads
    no draft model and drafts by name; anything else (a folder, a hub id, `eagle3:PATH`, `self:int4`) is a draft."""
    spec = BY_SOURCE.get(path.strip().lower())
    if spec is not None and not spec.loads_draft:
        return {"draft": None, "drafter": spec.name}
    return {"draft": path}


def sampled_refusal(name: str, target: str, given: str) -> str:
    """The refused row's reason when sampling: where such a source is measured instead."""
    return (f"doctor simulates sampled decoding from a draft model's coupled traces, and {name} drafts without a "
            f"draft model; measure it at -t 0, or race it live: gammatune compare --target {target} "
            f"--drafters {given},self:int4 -t 0.7")


def draft_size(pair: ModelPair) -> tuple[int, str, int]:
    """(parameters, precision, bytes) of what drafts: the draft model's, or none for a source without one (a
    head's weights are read with the target's; the table's size column says —)."""
    if pair.draft is None:
        return 0, "", 0
    info = pair.models()["draft"]
    return sum(p.numel() for p in pair.draft.parameters()), info["precision"], info["bytes"]


def record_greedy(pair: ModelPair, prompt_id: str, ids: list[int], max_new_tokens: int, max_window: int,
                  header_s: float, plain: tuple[list[int], float, float]) -> Any:
    """One prompt's greedy trace, of the pair's own kind: a draft model's (with the shared target-only run
    `plain`), or the source's (which decodes the target itself)."""
    from ..sim import trace_record

    if pair.draft is not None:
        return trace_record.record_trace(pair, prompt_id, ids, max_new_tokens, max_window - 1, pair.eos_ids,
                                         header_s, plain)
    source = pair.drafter
    return trace_kind(source.name).record(pair, prompt_id, ids, max_new_tokens, max_window, pair.eos_ids,
                                          source.params(), header_s)


def run_stats(trace: sim.Trace | ChainTrace) -> tuple[int, int, list[int]]:
    """(agreeing positions, positions, accepted per step when each step drafts until the source's first miss)."""
    agree = sum(a == b for a, b in zip(trace.draft_ids, trace.tokens))
    if isinstance(trace, sim.Trace):
        run, _ = sim._aux(trace)
    else:   # the deepest window the trace replays from each position: how far it matches
        kind = kind_of(trace)
        run = [kind.step_options(trace, n, trace.depth)[-1][2] for n in range(len(trace.tokens))]
    n, runs = 0, []
    while n < len(trace.tokens):
        runs.append(run[n])
        n += run[n] + 1
    return agree, len(trace.tokens), runs
