"""`doctor --server-log`: the server's acceptance beside gammatune's for the same pair, and the best window K′ ≤ K.

gammatune's side is the server's rule at the server's window (a fixed K)
played over the doctor's traces of the pair examined here, so both rows
count the same quantities: vLLM's mean acceptance length (the bonus token
included), draft acceptance rate, and the share of steps that accepted at
least i + 1 drafts (vLLM's per-position rate, llama.cpp's "acc rate/pos").

Under the verdict: what was inferred rather than read (the log's notes), then
the pitfalls the data shows (bench/doctor/pitfalls_data.py fills `pitfalls`,
one line each with its source) and, in one line, those this log cannot show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ...engine.policies import PolicySettings
from ..sim import simulate as sim
from .rank import Prices, mean_acceptance_length
from .server_log import ServerLog, WindowPrediction, predictions


@dataclass
class ServerView:
    log: ServerLog
    source: str                  # the file, as given
    draft: str
    ours_length: float           # gammatune here, same pair, fixed K: mean acceptance length
    ours_rate: float             # draft acceptance rate
    ours_survival: list[float]
    windows: list[WindowPrediction]
    costs_given: bool
    pitfalls: list[tuple[str, str]] = field(default_factory=list)   # (name, the line the user sees)
    unchecked: list[str] = field(default_factory=list)              # pitfalls this log cannot show, and why

    @property
    def best(self) -> WindowPrediction:
        """The K′ predicted fastest (with only a mean: the one whose least speed-up is the highest)."""
        return max(self.windows, key=lambda w: w.speedup if math.isfinite(w.speedup) else -1)

    @property
    def tie(self) -> bool:
        """The best K′ and the server's K print the same speed-up: neither is 'better'."""
        best, at_k = self.best, self.windows[-1]
        return best.k != at_k.k and _f(best.speedup) == _f(at_k.speedup)

    def to_json(self) -> dict[str, Any]:
        lg = self.log
        return {"file": self.source, "engine": lg.engine, "k": lg.k, "requests": lg.requests, "steps": lg.steps,
                "server": {"mean_acceptance_length": lg.mean_acceptance_length,
                           "draft_acceptance_rate": lg.draft_acceptance_rate,
                           "per_position_rate": None if lg.mean_only else lg.survival,
                           "mean_only": lg.mean_only is not None},
                "gammatune": {"draft": self.draft, "mean_acceptance_length": self.ours_length,
                              "draft_acceptance_rate": self.ours_rate, "per_position_rate": self.ours_survival},
                "windows": [{"k": w.k, "tokens_per_step": w.tokens_per_step, "speedup": w.speedup,
                             **({"tokens_per_step_high": w.high[0], "speedup_high": w.high[1]} if w.high else {})}
                            for w in self.windows],
                "notes": lg.notes or [], "best_k": self.best.k,
                "server_k_is_best": self.best.k == lg.k or self.tie, "tie": self.tie,
                "pitfalls": [{"name": n, "line": line} for n, line in self.pitfalls], "not_checked": self.unchecked}


def view(log: ServerLog, source: str, draft: str, traces: Sequence[Any], prices: Prices, max_new: int) -> ServerView:
    """The server's numbers, gammatune's at the server's K over `traces`, and every K′ ≤ K priced by `prices`."""
    policy = PolicySettings.build("specdecode", log.k)
    try:
        recs = [sim.play_trace(t, policy.make(), max_new, prices.cost) for t in traces]
    except sim.TraceTooShallow:   # the traces were recorded for shorter windows than the server's
        recs = []
    drafts = sum(r.pos_drafted[0] for r in recs if r.pos_drafted)
    drafted = sum(r.drafted for r in recs)
    survival = [sum(r.pos_accepted[i] for r in recs if len(r.pos_accepted) > i) / drafts if drafts else math.nan
                for i in range(len(log.survival))]
    return ServerView(log, source, draft, mean_acceptance_length(recs),
                      sum(r.accepted for r in recs) / drafted if drafted else math.nan, survival,
                      predictions(log, prices.cost), prices.given)


def _f(v: float) -> str:
    return f"{v:.2f}" if math.isfinite(v) else "—"


KNOBS = {"vLLM": "num_speculative_tokens", "SGLang": "--speculative-num-steps", "llama.cpp": "--spec-draft-n-max",
         "TensorRT-LLM": "max_draft_len"}


def knob(engine: str) -> str:
    """The setting that is K in the engine's own words (an AIPerf record: vLLM's names)."""
    return KNOBS.get(engine, "num_speculative_tokens")


def render(v: ServerView) -> Group:
    lg = v.log
    setting = knob(lg.engine)
    asked = f"{lg.requests} request(s), " if lg.requests else ""
    steps = "steps not reported" if lg.mean_only else f"{lg.steps} steps"
    t = Table(title=Text(f"Acceptance in the server's terms: {lg.engine} log {v.source} ({asked}"
                         f"{steps}, K = {lg.k}) beside gammatune's {v.draft} here at K = {lg.k}"),
              title_justify="left", caption_justify="left",
              caption=Text("acc. len: mean acceptance length, 1 + accepted / steps (the bonus token included) · "
                           "rate: accepted / drafted · per position: share of steps accepting at least i + 1 drafts"))
    for col in ("", "acc. len", "rate", "per position"):
        t.add_column(col, justify="left" if not col or col == "per position" else "right")
    t.add_row(Text(f"server ({lg.engine})"), Text(_f(lg.mean_acceptance_length)), Text(_f(lg.draft_acceptance_rate)),
              Text("unknown (a mean only)" if lg.mean_only else " ".join(_f(x) for x in lg.survival)))
    t.add_row(Text("gammatune here"), Text(_f(v.ours_length)), Text(_f(v.ours_rate)),
              Text(" ".join(_f(x) for x in v.ours_survival) if math.isfinite(v.ours_length)
                   else f"the traces reach shorter windows than K = {lg.k}: give --gammas up to {lg.k}"))
    priced = "with the costs you gave" if v.costs_given else "with this machine's costs (give your server's: --costs)"
    w = Table(title=Text("What a window of K′ ≤ K would give, " + ("as far as the server's mean says" if lg.mean_only
                                                                   else "from the server's own per-step counts")),
              title_justify="left", caption_justify="left",
              caption=Text(("a range: the mean accepted spread evenly over the K positions, to all of it at the "
                            "front; " if lg.mean_only else "each server step accepts min(a, K′) at K′ (exact per "
                            "step); ") + "every step is priced as one step at K′ " + priced))
    for col in ("K′", "tokens / step", "predicted"):
        w.add_column(col, justify="right")
    for p in v.windows:
        if v.tie and p in (v.best, v.windows[-1]):
            mark = " ← tie"
        else:
            mark = " ← best" if p is v.best else (" ← server" if p.k == lg.k else "")
        tokens, speed = _f(p.tokens_per_step), f"{_f(p.speedup)}×"
        if p.high:
            tokens, speed = f"{tokens}–{_f(p.high[0])}", f"{_f(p.speedup)}–{_f(p.high[1])}×"
        w.add_row(Text(str(p.k)), Text(tokens), Text(f"{speed}{mark}"))
    lines = [Text(n) for n in lg.notes or []]
    lines += [Text.assemble(("pitfall: ", "yellow"), (name, "bold"), " — ", line) for name, line in v.pitfalls]
    if v.unchecked:
        lines.append(Text("not checked (this log cannot show them): " + "; ".join(v.unchecked)))
    return Group(t, w, Text(_verdict(v, setting), style="bold"), *lines)


def _verdict(v: ServerView, setting: str) -> str:
    lg, best, at_k = v.log, v.best, v.windows[-1]
    if lg.mean_only:
        top = max((p.high[1] for p in v.windows[:-1] if p.high), default=-math.inf)
        if best.k != lg.k and best.speedup > at_k.speedup:
            return (f"the server's K = {lg.k} is not the best: {setting} {best.k} is predicted at least "
                    f"{_f(best.speedup)}× against {_f(at_k.speedup)}× at {lg.k}, however the mean is spread")
        if top <= at_k.speedup:
            return (f"the server's K = {lg.k} is the best of K′ ≤ {lg.k} ({_f(at_k.speedup)}×) however the mean is "
                    "spread over the positions")
        return (f"the server's K = {lg.k} is predicted {_f(at_k.speedup)}×; a smaller K′ could reach "
                f"{_f(top)}× if the acceptance sits at the front, which a mean cannot tell: give per-request "
                "responses for the per-position shares")
    if v.tie:
        return (f"a tie: {setting} {best.k} and the server's K = {lg.k} are both predicted {_f(best.speedup)}×; "
                f"the smaller window drafts less for the same speed")
    if best.k == lg.k:
        return (f"the server's K = {lg.k} is the best of K′ ≤ {lg.k} ({_f(at_k.speedup)}×); whether a larger K "
                "does better this log cannot say (gammatune's own grid, --for, can)")
    return (f"the server's K = {lg.k} is not the best: {setting} {best.k} is predicted {_f(best.speedup)}× "
            f"against {_f(at_k.speedup)}× at {lg.k}")


__all__ = ["KNOBS", "ServerView", "knob", "render", "view"]
