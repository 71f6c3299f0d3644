"""One speculative round, drawn as the explainer's figure draws it.

The draft row sits over the target row: the accepted prefix in the draft
colour with a tick under each token, the first mismatch struck through with the
target's correction under it, later drafts struck through (discarded), and a
bonus token after a fully accepted window. Under each drafted token: q (the
draft's probability of it), p (the target's) and min(1, p/q).

`render_step(event, roles)` is a pure function (tests, compare screen); the
`StepInspector` widget wraps it. Given the screen's `SessionLog`, the widget
owns which step it shows: it follows the newest step (drawn at once for the
first step, then at most every `INSPECTOR_INTERVAL` seconds, so a fast
session does not spend its time on tables) until the user picks one
(`follow` false), and numbers a step within its session ("turn 2 · step 3/40").
"""

from __future__ import annotations

import math
from typing import Callable, Collection

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from ...engine.events import DraftedToken, StepEvent, TargetToken
from ...render.safe_text import one_line, token_label
from ...session.session_log import SessionLog
from ..themes import FALLBACK, TokenRole
from .throttle import Throttle

MAX_CELL = 14
INSPECTOR_INTERVAL = 0.25
"""Seconds between redraws while the inspector follows the newest step (the first step draws at once)."""


def _cell(text: str, ends_turn: bool = False) -> str:
    s = token_label(text, ends_turn=ends_turn)
    return s if len(s) <= MAX_CELL or ends_turn else s[: MAX_CELL - 1] + "…"


def _num(x: float) -> str:
    """A probability as it reads right beside its neighbours: two decimals from 0.1 up, two significant
    digits under it ("q 0.0099, p 0.0040, min(1,p/q) 0.40", where two decimals read "q 0.01, p 0.00")."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if x == 0 or abs(x) >= 0.0995:
        return f"{x:.2f}"
    return f"{x:#.2g}"


def render_step(ev: StepEvent | None, roles: dict[str, TokenRole] | None = None, *,
                index: int | None = None, total: int | None = None, session: str = "",
                end_ids: Collection[int] = ()) -> RenderableType:
    """The inspector's picture of `ev` (None: a hint on how to pick a step).

    `index`/`total`: the step's place in its session (shown "step 3/40"),
    `session`: which one, when there were several (e.g. "turn 2"), `end_ids`:
    the ids that end a turn (the session header's), named "⟨end of turn⟩" in dim.
    """
    roles = roles or FALLBACK.roles
    if ev is None:
        return Text("No step yet. Send a prompt; then click a token, or press Ctrl+←/→, to pick a step.",
                    style="italic")
    draft_style = roles["draft"].style()
    target_style = roles["target"].style() + Style(bold=True)
    dim = Style(dim=True)
    ends = frozenset(end_ids)

    def tok_text(tok: DraftedToken | TargetToken, style: Style) -> Text:
        """A token's cell; one that ends the turn is named, dim."""
        return Text(_cell(tok.text, tok.id in ends), style=style + dim if tok.id in ends else style)
    d = len(ev.drafted)
    a = ev.accepted
    tt = ev.target_token
    # -- title line
    title = Text()
    where = f"step {index + 1}/{total}" if index is not None and total else f"step {ev.step + 1}"
    title.append(f"{session} · {where}" if session else where, style="bold")
    # the chart's three lines in its words: what the policy planned, what the draft proposed, what was kept
    title.append(f" · {ev.method} · γ planned {ev.gamma} · drafted {d}")
    if d < ev.gamma:
        title.append(" (stopped early)")
    title.append(f" · accepted {a}")
    if tt is not None:
        title.append(f" + {tt.kind}")
    title.append(f" · γ next {ev.gamma_next}")
    if ev.settings_changed:
        title.append(" · settings changed here", style="bold")
    # -- the rows
    n_cols = max(d, a + 1 if tt is not None else 0, 1)
    table = Table(box=None, show_header=True, header_style=dim, pad_edge=False, padding=(0, 1), expand=False)
    table.add_column("", style="bold", no_wrap=True)
    for i in range(n_cols):
        table.add_column(str(i), justify="center", no_wrap=True)
    draft_row: list[Text] = [Text("draft")]
    target_row: list[Text] = [Text("target")]
    q_row, p_row, r_row, top_row = [Text("q draft")], [Text("p target")], [Text("min(1,p/q)")], [Text("top-1 q")]
    for i in range(n_cols):
        if i < d:
            tok = ev.drafted[i]
            if i < a:
                draft_row.append(tok_text(tok, draft_style))
                target_row.append(Text("✓", style=draft_style))
            elif i == a:
                draft_row.append(tok_text(tok, draft_style + Style(strike=True)))
                target_row.append(tok_text(tt, target_style) if tt is not None else Text("✗"))
            else:
                draft_row.append(tok_text(tok, dim + Style(strike=True)))
                target_row.append(Text(""))
            q_row.append(Text(_num(tok.chosen_prob)))
            p_row.append(Text(_num(tok.target_prob)))
            r_row.append(Text(_num(tok.accept_prob)))
            top_row.append(Text(_num(tok.top_prob), style=dim))
        else:   # nothing drafted at this position (left blank: `·` is how a space token is drawn)
            draft_row.append(Text(""))
            target_row.append(tok_text(tt, target_style) if (tt is not None and i == a) else Text(""))
            for row in (q_row, p_row, r_row, top_row):
                row.append(Text(""))
    for row in (draft_row, target_row, q_row, p_row, r_row, top_row):
        table.add_row(*row)
    # -- the sentence under it
    note = Text()
    note.append(f"accepted prefix: {a} token{'s' if a != 1 else ''}", style=draft_style)
    if tt is not None and tt.kind == "correction" and a < d:
        note.append(" · first mismatch at position ")
        note.append(str(a))
        note.append(": drafted ")
        note.append_text(tok_text(ev.drafted[a], Style(strike=True)))
        note.append(" → target ")
        note.append_text(tok_text(tt, target_style))
        if d - a - 1 > 0:
            note.append(f" · {d - a - 1} later draft{'s' if d - a - 1 != 1 else ''} discarded", style=dim)
    elif tt is not None and tt.kind == "bonus" and d == 0:
        note.append(" · nothing drafted (the draft stopped at once); the target's token ")
        note.append_text(tok_text(tt, target_style))
    elif tt is not None and tt.kind == "bonus":
        note.append(" · all drafts accepted; bonus token ")
        note.append_text(tok_text(tt, target_style))
    elif tt is not None:
        note.append(" · target token ")
        note.append_text(tok_text(tt, target_style))
    note.append(f" · draft {ev.draft_s * 1000:.1f} ms, verify {ev.verify_s * 1000:.1f} ms", style=dim)
    return Group(title, table, note)


class StepInspector(Static):
    """Shows one StepEvent: `show(event, index, total)`; or, given a log, its newest step or a chosen one.

    `step_total(session, shown)` says how many steps session `session` has
    for "step i/n" (those shown, unless the screen knows more: a replay).
    """

    follow: var[bool] = var(True, always_update=True, init=False)
    """Whether it shows the log's newest step (set true: drawn at once); false while the user's pick holds."""

    DEFAULT_CSS = """
    StepInspector {
        height: 11;
        padding: 0 1;
        background: $panel;
        overflow-x: auto;
    }
    """

    def __init__(self, *, log: SessionLog | None = None, step_total: Callable[[int, int], int] | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(render_step(None), id=id, classes=classes)
        self.session_log = log if log is not None else SessionLog()
        self.step_total = step_total or (lambda session, shown: shown)
        self._throttle = Throttle(self, INSPECTOR_INTERVAL, self._draw_newest)
        self.event: StepEvent | None = None
        self.index: int | None = None
        self.total: int | None = None
        self.session = ""
        self.end_ids: frozenset[int] = frozenset()
        self.roles: dict[str, TokenRole] = dict(FALLBACK.roles)

    def show(self, event: StepEvent | None, index: int | None = None, total: int | None = None,
             session: str = "", end_ids: Collection[int] = ()) -> None:
        """`end_ids`: the session's ids that end a turn (its header's), named rather than shown as text."""
        self.event, self.index, self.total, self.session = event, index, total, session
        self.end_ids = frozenset(end_ids)
        # fixed height: no layout pass per update (a layout repaints the whole screen)
        self.update(render_step(event, self.roles, index=index, total=total, session=session,
                                end_ids=self.end_ids), layout=False)

    # -- following the log ----------------------------------------------------------------
    def watch_follow(self, follow: bool) -> None:
        if follow:
            self._throttle.run()

    def step_added(self) -> None:
        """A step joined the log: while following, draw it now if the last draw is older than the interval,
        else at the interval's end."""
        if self.follow:
            self._throttle.request()

    def catch_up(self) -> None:
        """While following, the newest step now (a turn ended: no redraw left waiting)."""
        if self.follow:
            self._throttle.run()

    def _draw_newest(self) -> None:
        if self.follow and self.session_log.steps:
            self.show_logged(len(self.session_log.steps) - 1)

    def show_logged(self, index: int) -> None:
        """The log's global step `index`, numbered within its session ("turn 2 · step 3/40")."""
        log = self.session_log
        k, start, end = log.session_of(index)
        name = ""
        h = log.header(k)
        if len(log.sessions) > 1 and h is not None:
            name = one_line(h.label) if h.label else f"turn {h.turn + 1}"
        self.show(log.steps[index], index - start, self.step_total(k, end - start), name,
                  end_ids=log.end_ids(k, index))

    def set_roles(self, roles: dict[str, TokenRole]) -> None:
        self.roles = dict(roles)
        self.show(self.event, self.index, self.total, self.session, self.end_ids)

    def toggle_shown(self, short: bool) -> None:
        """F7. On a tall screen: shown / hidden. On a short one (`short`: it keeps to its step line there,
        `-full` shows the whole table): step line → whole table → hidden → step line."""
        if short and self.display and not self.has_class("-full"):
            self.add_class("-full")
        elif self.display:
            self.display = False
            self.remove_class("-full")
        else:
            self.display = True
