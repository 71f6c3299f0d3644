"""What `doctor --for` prints and saves: each engine's best setting beside gammatune's own, and how to run it.

Plain functions from `EngineResult`s to Rich renderables and to JSON. Model
names are user input: they reach the terminal only inside `Text`. Commands
are printed one per line, unwrapped, so that they paste as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...engine.common.names import is_self_draft
from .rank import EngineResult, OwnBest, Prices, Row
from .source_commands import source_command


@dataclass
class DeployAdvice:
    """`doctor --for`'s answer for one draft."""

    target: str
    draft: str                     # as the user named it (a path, a hub id, self:int4)
    law: str                       # "greedy" or the sampled law
    results: list[EngineResult]
    own: OwnBest
    prices: Prices

    def command(self, r: EngineResult, row: Row | None = None) -> str:
        """The ready-to-paste command of a row (the engine's best by default), or how near the engine gets."""
        if is_self_draft(self.draft):
            return f"{r.engine.title}: {r.engine.self_draft} (the prediction is for gammatune's {self.draft})"
        setting = (row or r.best).setting
        own = source_command(r.engine.name, self.target, self.draft, setting)   # a head, prompt lookup
        return own if own is not None else r.engine.command(self.target, self.draft, setting)

    def to_json(self) -> dict[str, Any]:
        c = self.prices.cost
        return {
            "target": self.target, "draft": self.draft, "law": self.law, "batch": 1,
            "costs": {"given": self.prices.given, "draft_ms": c.draft_token_s * 1000,
                      **({"draft_step_ms": c.draft_step_s * 1000} if c.draft_step_s else {}),
                      "verify_ms": {str(k): v * 1000 for k, v in sorted(c.verify_s.items())},
                      "target_alone_ms_per_token": _plain_ms(self.prices)},
            "gammatune": {"method": self.own.method, "gamma0": self.own.gamma0, "speedup": _num(self.own.speedup),
                          "spread": self.own.spread},
            "engines": [{"engine": r.engine.name, "source": r.engine.source, "command": self.command(r),
                         "best": r.best.to_json(), "default": r.default.to_json() if r.default else None,
                         "rank": [dict(row.to_json(), rank=r.ranks[row.setting.label]) for row in r.rows],
                         "self_draft": r.engine.self_draft, "prompt_lookup": r.engine.lookup,
                         "notes": list(r.engine.notes)} for r in self.results],
        }


def _num(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _plain_ms(prices: Prices) -> float | None:
    c = prices.cost
    return c.verify(1) * 1000 if c.verify_s else None


def _xs(v: float, spread: float) -> str:
    if not math.isfinite(v):
        return "—"
    return f"{v:.2f}×±{spread:.2f}" if spread > 0 else f"{v:.2f}×"


def engines_table(advice: DeployAdvice) -> Table:
    t = Table(title=Text(f"What each engine can run with draft {advice.draft} ({advice.law}, batch 1, simulated)"),
              title_justify="left", caption_justify="left",
              caption=Text("predicted: speedup over the target alone ± its largest change when one timing pass "
                           "prices it · prompts: lowest–highest prompt · acc. len: mean acceptance length "
                           "(vLLM's: 1 + accepted / drafts, the bonus token included) · default: the engine's "
                           "own default setting"))
    for col, just in (("engine", "left"), ("best setting", "left"), ("predicted", "right"), ("prompts", "right"),
                      ("acc. len", "right"), ("default → predicted", "left")):
        t.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for r in advice.results:
        b, d = r.best, r.default
        t.add_row(Text(r.engine.title), Text(b.setting.label), Text(_xs(b.speedup, b.spread)),
                  Text(f"{b.low:.2f}–{b.high:.2f}"), Text(f"{b.mean_acceptance_length:.2f}"),
                  Text(f"{d.setting.label} → {_xs(d.speedup, d.spread)}" if d else r.engine.no_default))
    o = advice.own
    t.add_row(Text("gammatune", style="bold"), Text(f"{o.method} γ0={o.gamma0}"), Text(_xs(o.speedup, o.spread)),
              Text(""), Text(""), Text("its own decoder: what the engines leave on the table", style="dim"))
    return t


def assumptions(advice: DeployAdvice) -> Text:
    c = advice.prices.cost
    plain = _plain_ms(advice.prices)
    if advice.prices.given:
        costs = (f"the costs you gave: {c.draft_token_s * 1000:g} ms per drafted token, {plain:g} ms per target "
                 "forward (a verify pass of any window, and each token of the target alone)")
    else:
        per_step = f" and {c.draft_step_s * 1000:.2f} ms per drafting step" if c.draft_step_s else ""
        costs = (f"gammatune's own costs measured on this machine: {c.draft_token_s * 1000:.2f} ms per drafted token"
                 f"{per_step}, "
                 f"verify {', '.join(f'{k}: {v * 1000:.1f}' for k, v in sorted(c.verify_s.items()))} ms, the target "
                 f"alone {plain:.1f} ms per token; a server's kernels differ: give yours with "
                 "--costs DRAFT_MS,VERIFY_MS")
    return Text("assumes: one request at a time (batch 1) and " + costs + ". At high concurrency a server's target "
                "forward is no longer memory-bound and the same setting may be slower than speculation off.",
                style="dim")


def render(advice: DeployAdvice) -> RenderableType:
    parts: list[RenderableType] = [engines_table(advice)]
    for r in advice.results:
        lose = math.isfinite(r.best.speedup) and r.best.speedup + r.best.spread < 1.0
        parts.append(Text(f"{r.engine.title} ({r.engine.source}):", style="bold"))
        if lose:
            parts.append(Text(f"  speculation off: every {r.engine.title} setting is predicted slower than the "
                              f"target alone (best {r.best.speedup:.2f}×)", style="yellow"))
        parts.append(Text("  " + advice.command(r)))
        for note in r.engine.notes:
            parts.append(Text(f"  note: {note}", style="yellow" if "default" in note else "dim"))
        if not is_self_draft(advice.draft):
            parts.append(Text(f"  self-draft: {r.engine.self_draft}; {r.engine.lookup}", style="dim"))
    parts.append(assumptions(advice))
    return Group(*parts)


def print_advice(console: Console, advice: DeployAdvice) -> None:
    console.print(engines_table(advice))
    group = render(advice)
    assert isinstance(group, Group)   # render() returns its parts as one Group
    for part in list(group.renderables)[1:]:
        console.print(part, soft_wrap=True)   # a command stays one line: it pastes as it is


__all__ = ["DeployAdvice", "assumptions", "engines_table", "print_advice", "render"]
