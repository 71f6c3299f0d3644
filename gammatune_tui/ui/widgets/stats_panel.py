"""The numbers of docs/spec.md §5 for the running session, from `RunningStats`.

Redraws at once on the first step and then at most four times a second
(`show(stats)` may be called every step), so a fast session does not spend
its time formatting tables. Long values wrap under their label rather than
being cut at the panel's edge; the panel grows by a row when one wraps (a
layout pass only when its line count changes).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from ...render.stop_words import STOP_WORDS
from ...session.stats import RunningStats
from .throttle import Throttle

REGIME_HELP = {
    "easy": "drafts mostly accepted: long windows pay",
    "moderate": "mixed acceptance: mid-length windows",
    "difficult": "drafts mostly rejected: short windows",
}


def render_stats(s: RunningStats | None, max_positions: int = 8) -> RenderableType:
    """The panel's content for `s` (a pure function, for tests and the compare screen)."""
    if s is None or s.steps == 0:
        return Text("No steps yet.", style="italic")
    t = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), expand=False)
    t.add_column("k", style="dim", no_wrap=True, min_width=12)
    t.add_column("v", overflow="fold")
    t.add_row("tokens/s", f"{s.tokens_per_s:,.1f}  ({s.tokens} tokens, {s.steps} steps)")
    t.add_row("α", f"{s.acceptance_rate:.2f}  (last {s.window} steps {s.rolling_acceptance:.2f})")
    # planned and drafted apart: a threshold that stops windows early shows here even while γ holds still
    t.add_row("tokens/step", f"{s.tokens_per_step:.2f}  (mean γ {s.mean_gamma:.2f} planned, "
                             f"{s.drafted / s.steps:.2f} drafted)")
    per = s.per_position[:max_positions]
    if per:
        t.add_row("per position", " ".join(f"{x:.2f}" for x in per) + (" …" if len(s.per_position) > max_positions else ""))
    t.add_row("acc. length", f"{s.mean_acceptance_length:.2f}  (vLLM's mean, bonus token in)")
    t.add_row("calls", f"target {s.target_calls} · draft {s.draft_calls}")
    if s.drafted and not s.draft_calls:  # a model-free draft source (prompt lookup): eq. 1 and 6 need a T_draft
        t.add_row("c", f"—  (T_target {s.t_target * 1000:.2f} ms; no draft model)")
        t.add_row("cost eq. 6", f"— modeled · {s.measured_cost_s:.3f} s measured")
    else:
        t.add_row("c", f"{s.c:.1f}  (T_target {s.t_target * 1000:.2f} ms / T_draft {s.t_draft * 1000:.2f} ms)")
        t.add_row("cost eq. 6", f"{s.modeled_cost_s:.3f} s modeled · {s.measured_cost_s:.3f} s measured")
    reg = s.regime
    t.add_row("regime", Text.assemble((reg, "bold"), f"  {REGIME_HELP.get(reg, '')}"))
    if s.hindsight is not None:
        t.add_row("vs oracle", s.hindsight.short())
    verdict = s.speed_verdict
    if verdict is not None:
        t.add_row("vs plain", verdict.figures())
    parts: list[RenderableType] = [t]
    if verdict is not None and verdict.slower:
        parts.append(Text(verdict.warning(), style=Style(bold=True, color="red")))
    if s.summary is not None:
        sm = s.summary
        parts.append(Text(f"done: {sm.tokens} tokens in {sm.steps} steps · "
                          f"{STOP_WORDS.get(sm.stop_reason, sm.stop_reason)}", style="dim"))
        if sm.error:
            parts.append(Text(f"error: {sm.error}", style=Style(color="red")))
    return Group(*parts)


class StatsPanel(Static):
    """Call `show(stats)` as often as you like; it redraws at most every `interval` seconds.

    The first call after a quiet spell draws at once (the first step shows
    immediately); calls within `interval` of a draw are collected into one
    draw at its end. An update repaints only this panel unless the number of
    lines changed.
    """

    DEFAULT_CSS = """
    StatsPanel { height: auto; min-height: 1; padding: 0 1; }
    StatsPanel.-slower { border-left: thick $error; }
    """

    def __init__(self, *, interval: float = 0.25, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(render_stats(None), id=id, classes=classes)
        self.interval = interval
        self.stats: RunningStats | None = None
        self._throttle = Throttle(self, interval, self._redraw)
        self._lines = 1

    def show(self, stats: RunningStats | None, *, now: bool = False) -> None:
        self.stats = stats
        if now or not self.is_mounted:
            self._throttle.run()
        else:
            self._throttle.request()

    def _redraw(self) -> None:
        verdict = self.stats.speed_verdict if self.stats is not None else None
        self.set_class(bool(verdict and verdict.slower), "-slower")
        content = render_stats(self.stats)
        lines = self._line_count(content)
        # a layout repaints the whole screen: only when the panel's height has to change
        self.update(content, layout=lines != self._lines)
        self._lines = lines

    def _line_count(self, content: RenderableType) -> int:
        width = self.content_region.width if self.is_mounted else 0
        if width <= 0:
            return -1
        console = self.app.console
        return len(console.render_lines(content, console.options.update(width=width, height=None), pad=False))
