"""Traces and the decoder's cost calibration, recorded once and kept in the user's cache directory.

`bench --simulate` plays every policy exactly over greedy traces in about a
second, but recording the traces (a target decode, a teacher-forced draft
pass and the off-path drafts per prompt) and timing the decoder takes far
longer — most of a first run. Neither changes while the pair, the prompts,
the token budget, the depth, the machine's settings and the versions stay
the same, so they are kept per such key in `$GAMMATUNE_CACHE_DIR`, else
`$XDG_CACHE_HOME/gammatune`, else `~/.cache/gammatune` (under `traces/`):
a second `--simulate`, and `--tune` after it, start from them.
`--refresh-traces` records them again; `--traces FILE` keeps them in a file
of the user's choosing instead. Until all are recorded and timed, each trace
is kept as it finishes beside that file (trace_partial.py): a Ctrl+C loses
none, and the next run records only the rest.

The key names the models by path and by their weights' sizes and content
(a digest of each file's first and last MiB: a retrained model in the same
directory is a new key, another checkout of the same weights is not),
the prompts by their token ids, and the device, dtype, runner, torch threads
and versions the timings were taken with.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rich.console import Console
from rich.text import Text

from ...engine.common.pair import ModelPair
from ...engine.drafting.draft_sources import DrafterSettings, pair_drafter
from ...engine.plain import plain_decode
from ...engine.policies import SpecDecode
from ...engine.policies.policy_base import TokenStats
from ...engine.policies.policy_params import PolicyParams
from ...engine.common.sampling import SamplingConfig
from ...engine.runners import runner_pool
from ...engine.events import StepEvent
from ...engine.events.step_events import versions
from ...engine.events.text_pieces import prompt_pieces
from ...errors import Interrupted, InvalidParameter
from ...resources import CACHE_ENV, cache_root  # noqa: F401  (one answer to where the cache is)
from ..live import protocol
from ..sim.cost_model import CALIBRATION_GAMMAS, MIN_SAMPLES, CostModel, calibrate
from ..sim.trace_kinds import trace_from_json, trace_kind
from ..sim.trace_sampled import record_sampled_trace
from .common import progress_bar
from .shipped_traces import load_shipped
from .trace_partial import PartialTraces, partial_path

if TYPE_CHECKING:   # transformers loads with the pair, not when bench imports this
    from transformers import PreTrainedModel

# what a kept trace holds: 2 = the draft's entropy at every position (traces kept before lack it, so their
# key differs and they are recorded again)
FORMAT = 2


def _weights_fingerprint(model: PreTrainedModel | None) -> list[list[Any]]:
    """Name, size and a digest of the first and last MiB of each weight file (empty when unknown).

    Content, not modification time: two checkouts of the same weights (a
    worktree, a fresh clone) share their traces, and a retrained model of the
    same size is still a new key. Hashing two MiB stays fast for any size.
    """
    path = getattr(getattr(model, "config", None), "_name_or_path", "") or getattr(model, "name_or_path", "")
    d = Path(str(path)) if path else None
    if d is None or not d.is_dir():
        return []
    out = []
    for f in sorted(list(d.glob("*.safetensors")) + list(d.glob("*.bin"))):
        size = f.stat().st_size
        h = hashlib.sha256()
        with f.open("rb") as fh:
            h.update(fh.read(1 << 20))
            if size > 2 << 20:
                fh.seek(size - (1 << 20))
                h.update(fh.read(1 << 20))
        out.append([f.name, size, h.hexdigest()[:16]])
    return out


def trace_key(pair: ModelPair, pid: list, max_new_tokens: int, sampling: SamplingConfig | None = None) -> dict[str, Any]:
    """Everything the traces and the timings depend on (the depth is stored beside it: deeper serves shallower).

    Sampled traces add their temperature, top-k, top-p and seed; a greedy key
    has no sampling entry (the same greedy traces, whatever -t was given as 0).
    """
    import torch

    drafter = pair_drafter(pair)
    return {
        "format": FORMAT,
        "target": str(pair.name_target), "draft": str(pair.name_draft),
        "target_weights": _weights_fingerprint(pair.target), "draft_weights": _weights_fingerprint(pair.draft),
        # a self-draft has its target's files: its format (self:int4, self:int8…) tells the traces apart
        **({"self_draft": pair.self_draft.name} if pair.self_draft is not None else {}),
        "device": str(pair.device), "dtype": str(pair.dtype),
        "runner": runner_pool(pair).label, "threads": torch.get_num_threads(),
        "versions": versions(),
        "prompts": [[p.id, list(p.ids)] for p in pid],
        "max_new_tokens": max_new_tokens,
        # a source without a draft model: its own kind of trace, for its own parameters
        **({"drafter": {"name": drafter.name, **drafter.params()}} if not drafter.loads_draft else {}),
        **({"sampling": sampling.to_json()} if sampling is not None and not sampling.greedy else {}),
    }


def cache_file(key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:20]
    return cache_root() / "traces" / f"{digest}.json"


@dataclass
class TraceSet:
    """Traces, the cost model priced from them, and where they came from."""

    traces: list
    cost: CostModel
    source: str            # "recorded", "cache", "file" or "shipped" (shipped_traces.py)
    path: Path | None = None
    seconds: float = 0.0   # what recording them took (now, or when they were recorded)
    passes: list = field(default_factory=list)  # one CostModel per timing pass; `cost` pools them
    resumed: int = 0       # traces an interrupted run had kept (trace_partial.py), not recorded again


TIMING_PASSES = 3  # the decoder is timed this many times; shares are reported with their spread across passes
# what the kept cost model was timed with: 2 = every calibration window, a session that never drafts, and
# trimmed means (bench/sim/cost_model.py); 3 = target-only decoding timed in the same pass
# (`CostModel.plain_token_s`: the traces' own target-only time was taken at recording, under another load);
# 4 = sessions of 64 tokens at most; 5 = every window in one session of the answers' length (`_Cycle`), each
# priced by the mean of its steps without the busy ones (`cost_model.typical`, no longer a trimmed mean);
# passes kept under an older timing are taken again, the traces stay
TIMING_VERSION = 5
# target-only decoding's tokens in a timing pass: its price is per token; timed over 64 tokens it priced the demo
# target's 256-token answers within 2-4 % of live on average (docs/benchmarks-first-simulate.md)
TARGET_ONLY_TOKENS = 64
# a pass's windows are each timed at least this often (calibrate's MIN_SAMPLES), in at most MAX_CYCLE_SESSIONS
# sessions (an answer that ends early is followed by another)
CYCLE_SAMPLES, MAX_CYCLE_SESSIONS = MIN_SAMPLES, 4


def _read(path: Path, key: dict[str, Any], max_window: int) -> TraceSet | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("key") != key or data.get("max_window", 0) < max_window:
        return None
    traces = [trace_from_json(t) for t in data["traces"]]
    passes = [CostModel.from_json(c) for c in data.get("cost_passes", [])] \
        if data.get("timing", 1) >= TIMING_VERSION else []
    return TraceSet(traces, CostModel.from_json(data["cost_model"]), "file", path, float(data.get("record_s", 0.0)),
                    passes)


def _write(path: Path, key: dict[str, Any], max_window: int, ts: TraceSet) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"key": key, "max_window": max_window, "cost_model": ts.cost.to_json(),
                               "record_s": ts.seconds, "created": time.time(), "timing": TIMING_VERSION,
                               "cost_passes": [c.to_json() for c in ts.passes],
                               "traces": [t.to_json() for t in ts.traces]}), encoding="utf-8")
    os.replace(tmp, path)   # a run cut short never leaves half a file behind


def traces_word(n: int) -> str:
    return f"{n} trace" if n == 1 else f"{n} traces"


def record(err: Console, pair: ModelPair, pid: list, max_new_tokens: int, max_window: int,
           sampling: SamplingConfig | None = None, partial: PartialTraces | None = None) -> TraceSet:
    """One trace per prompt (sampled ones with `sampling`), then the timing passes.

    With `partial`, each trace is kept as it finishes and the traces an
    earlier, interrupted run kept there are not recorded again.
    """
    t_start = time.perf_counter()
    drafter = pair_drafter(pair)
    sampled = sampling is not None and not sampling.greedy
    if sampled and not drafter.loads_draft:
        raise InvalidParameter(f"--simulate at a temperature above 0 needs a draft model: {drafter.name}'s proposals "
                               "depend on where each window starts" + ("" if drafter.point_mass else
                                                                        " and on its own draws")
                               + ", so its sampled runs cannot share one trace (use -t 0, or a live bench)")
    partial = partial if partial is not None else PartialTraces(None, {}, max_window)
    kept = partial.load()
    done = {p.id: kept[p.id] for p in pid if p.id in kept}
    if done:
        err.print(Text(f"resuming: {len(done)} of {traces_word(len(pid))} kept in {partial.path} by an interrupted "
                       "run; recording the rest", style="dim"))
    try:
        ts = _record(err, pair, pid, max_new_tokens, max_window, sampling, drafter, sampled, done, partial, t_start)
        ts.resumed = len(kept.keys() & {p.id for p in pid})
        return ts
    except KeyboardInterrupt:   # say what was recorded and where it stays, not just "interrupted"
        n = f"{len(done)} of {traces_word(len(pid))} recorded"
        if partial.path is None or not done:
            raise Interrupted(f"{n}, none kept" + (" (the cache directory cannot be written)" if done else "")) \
                from None
        rest = ("the decoder was not timed yet: the next --simulate times it" if len(done) == len(pid)
                else "the next --simulate records only the rest")
        raise Interrupted(f"{n}, kept in {partial.path} ({rest})") from None


def _record(err: Console, pair: ModelPair, pid: list, max_new_tokens: int, max_window: int,
            sampling: SamplingConfig | None, drafter: DrafterSettings, sampled: bool, done: dict,
            partial: PartialTraces, t_start: float) -> TraceSet:
    with progress_bar(err) as prog:
        task = prog.add_task("recording traces", total=len(pid) + 2, completed=len(done))
        protocol.warm_up(pair, pid[0], protocol.SweepConfig(methods=["specdecode"], gammas=[4], max_new_tokens=16,
                                                            baselines=()))
        for p in pid:
            if p.id in done:
                continue
            t0 = time.perf_counter()
            prompt_pieces(pair.tokenizer, p.ids)
            header_s = time.perf_counter() - t0
            if sampled:
                assert sampling is not None   # `sampled`: a sampling law was given
                trace = record_sampled_trace(pair, p.id, p.ids, max_new_tokens, max_window - 1, pair.eos_ids,
                                             sampling, header_s)
            else:
                trace = trace_kind(drafter.name).record(pair, p.id, p.ids, max_new_tokens, max_window, pair.eos_ids,
                                                        drafter.params(), header_s)
            partial.add(p.id, trace)   # on disk before the next one starts: a Ctrl+C loses no finished trace
            done[p.id] = trace
            prog.update(task, advance=1, description=f"trace {p.id}")
        traces = [done[p.id] for p in pid]
        prog.update(task, description="timing the decoder")
        cost, passes = time_decoder(pair, pid[0], max_new_tokens, max_window, traces[0].session_s, sampling)
        prog.update(task, advance=2)
    return TraceSet(traces, cost, "recorded", None, time.perf_counter() - t_start, passes)


def time_decoder(pair: ModelPair, prompt: protocol.PromptIds, max_new_tokens: int, max_window: int, trace_session_s: float,
                 sampling: SamplingConfig | None = None, passes: int = TIMING_PASSES,
                 keep_events: list | None = None) -> tuple[CostModel, list]:
    """The pooled cost model and one per timing pass, each pass timing target-only decoding and every
    calibration window (and γ = 0, a step that does not draft) on one prompt.

    A pass is what one timing of this machine says; the tables price every
    policy with the pool and report how far the passes disagree. Sampled
    traces are timed with sampled decoding (its draws and accept tests cost too).
    `keep_events` gets each pass's step events, as a list per pass.
    """
    windows = [0] + [g for g in CALIBRATION_GAMMAS if g <= max_window]
    every: list = []
    models = []
    plain = [0.0, 0]  # target-only seconds and tokens over every pass
    for r in range(passes):
        events: list = []
        if r % 2:   # target-only before the windows in one pass, after them in the next
            cycle_sessions(pair, prompt, max_new_tokens, windows, events, sampling)
        run = plain_decode(pair, prompt.ids, min(max_new_tokens, TARGET_ONLY_TOKENS), sampling)  # "× target-only"
        if r % 2 == 0:
            cycle_sessions(pair, prompt, max_new_tokens, windows[::-1], events, sampling)
        models.append(calibrate(events))
        models[-1].plain_token_s = run.wall_s / len(run.token_ids) if run.token_ids else 0.0
        plain = [plain[0] + run.wall_s, plain[1] + len(run.token_ids)]
        every += events
        if keep_events is not None:
            keep_events.append(events)
    cost = calibrate(every)
    cost.plain_token_s = plain[0] / plain[1] if plain[1] else 0.0
    for c in (cost, *models):
        c.session_s = max(0.0, c.outside_s - trace_session_s)
    return cost, models


class _Cycle(SpecDecode):
    """Every window of `windows` in turn, one step each, there and back (γ = 0: a plain target step).

    One session of the answers' length then times each window all along
    their context, as the simulated sessions meet it, in one prefill: a
    session of 64 tokens per window took 2.7× as long, and its prices moved
    about twice as much from one timing to the next
    (benchmarks/timing_agreement.py, docs/benchmarks-first-simulate.md).
    """

    def __init__(self, windows: list[int], at: int = 0) -> None:
        super().__init__(1, PolicyParams.build())
        self.order = windows + windows[::-1]
        self.at = at
        self.gamma = self.order[at % len(self.order)]

    def update(self, accepted: int, drafted: int, window: Sequence[TokenStats] = ()) -> None:
        super().update(accepted, drafted, window)
        self.at += 1
        self.gamma = self.order[self.at % len(self.order)]


def cycle_sessions(pair: ModelPair, prompt: protocol.PromptIds, max_new_tokens: int, windows: list[int], events: list,
                   sampling: SamplingConfig | None = None) -> None:
    """Sessions of `_Cycle` over `windows` (events appended to `events`) until each window was planned
    CYCLE_SAMPLES times, or MAX_CYCLE_SESSIONS sessions (an answer that ends early)."""
    from ...engine.decoder import SpeculativeDecoder

    served = sampling if sampling is not None else SamplingConfig()
    seen = dict.fromkeys(windows, 0)
    at = 0
    for _ in range(MAX_CYCLE_SESSIONS):
        policy = _Cycle(windows, at)
        got = list(SpeculativeDecoder(pair, policy, served).generate(list(prompt.ids), max_new_tokens=max_new_tokens))
        events.extend(got)
        for ev in got:   # planned, not drafted: prompt lookup drafts what the text holds, often less
            if isinstance(ev, StepEvent) and ev.gamma in seen:
                seen[ev.gamma] += 1
        if min(seen.values()) >= CYCLE_SAMPLES:
            return
        at = policy.at


def load_or_record(err: Console, pair: ModelPair, pid: list, max_new_tokens: int, max_window: int,
                   traces_path: Path | None = None, refresh: bool = False,
                   sampling: SamplingConfig | None = None) -> TraceSet:
    """The traces for this key: from `traces_path` or the cache when they match, else recorded (and kept).

    Traces kept before the decoder was timed more than once, or timed by an
    older timing pass (TIMING_VERSION), get their timing passes now (the
    traces themselves stay).
    """
    key = trace_key(pair, pid, max_new_tokens, sampling)
    path = traces_path if traces_path is not None else cache_file(key)
    if path.exists() and not refresh:
        try:
            found = _read(path, key, max_window)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if traces_path is not None:
                raise InvalidParameter(f"--traces {traces_path}: unreadable trace file ({exc})") from None
            found = None   # a damaged cache entry is recorded again
        if found is not None:
            found.source = "file" if traces_path is not None else "cache"
            err.print(Text(f"using the traces and cost model in {path} (recorded in {found.seconds:.0f} s; "
                           "--refresh-traces records them again)", style="dim"))
            if len(found.passes) < TIMING_PASSES:
                try:
                    with err.status(f"timing the decoder ({TIMING_PASSES} passes; these traces were kept with "
                                    "fewer, or with an older timing pass)"):
                        found.cost, found.passes = time_decoder(pair, pid[0], max_new_tokens, max_window,
                                                                found.traces[0].session_s, sampling)
                except KeyboardInterrupt:
                    raise Interrupted(f"while timing the decoder; the traces stay in {path}") from None
                try:
                    _write(path, key, max_window, found)
                except OSError:
                    pass  # the passes are measured again next time
            return found
        if traces_path is not None:
            err.print(Text(f"{traces_path} was recorded for other models, prompts, budget, windows or versions; "
                           "recording again", style="yellow"))
    shipped = load_shipped(err, pair, pid, key, max_window) if traces_path is None and not refresh else None
    if shipped is not None:   # the demo pair's default set: replayed from the package, timed here
        t0 = time.perf_counter()
        try:
            with err.status(f"timing the decoder ({TIMING_PASSES} passes)"):
                cost, passes = time_decoder(pair, pid[0], max_new_tokens, max_window, shipped[0].session_s, sampling)
        except KeyboardInterrupt:
            raise Interrupted("while timing the decoder (the shipped traces need no recording)") from None
        ts = TraceSet(shipped, cost, "shipped", None, time.perf_counter() - t0, passes)
    else:
        partial = PartialTraces(partial_path(path), key, max_window)
        ts = record(err, pair, pid, max_new_tokens, max_window, sampling, partial)
    try:
        _write(path, key, max_window, ts)
        if shipped is None:
            partial.remove()
        ts.path = path
        earlier = f" ({ts.resumed} of them by the interrupted run)" if ts.resumed else ""
        if shipped is not None:
            err.print(Text(f"timed the decoder in {ts.seconds:.0f} s; the shipped traces and this cost model are "
                           f"kept in {path}", style="dim"))
        else:
            err.print(Text(f"recorded {traces_word(len(ts.traces))}{earlier} and the cost model in {ts.seconds:.0f} s; "
                           f"kept in {path}", style="dim"))
    except OSError as exc:
        if traces_path is not None:
            raise InvalidParameter(f"--traces {traces_path}: cannot write ({exc.strerror or exc})") from None
        err.print(Text(f"note: could not keep the traces in {path} ({exc.strerror or exc})", style="yellow"))
    return ts


__all__ = ["CACHE_ENV", "TIMING_PASSES", "cache_root", "cache_file", "trace_key", "TraceSet", "record", "time_decoder",
           "load_or_record"]
