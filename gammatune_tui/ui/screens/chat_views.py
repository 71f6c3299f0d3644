"""The chat screen's inspector, step selection and controls: a mixin, so `chat.py` keeps to events and turns.

The inspector follows the newest step (drawn at once for the first step,
then at most every `INSPECTOR_INTERVAL` seconds) until the user picks one:
a click on a token, ←/→ in the transcript, or Ctrl+←/→ from anywhere but a
field holding text (where those keys move by word). Steps are numbered
within their session, as the replay player counts them ("turn 2 · step 3/40").
Control changes go to the source, which applies them at the next step.

Needs from the screen: `steps`, `sessions`, `session_starts`, `follow`,
`generating`, `read_only`, `stop_requested`, `source`, `stats`, and the
widget properties `transcript`, `inspector`, `stats_panel`, `chart`, `controls`.
"""

from __future__ import annotations

import time
from bisect import bisect_right

from textual.actions import SkipAction

from ...errors import GammatuneError
from ...render.safe_text import one_line
from ..widgets.controls import LABELS, ControlsPanel
from ..widgets.token_stream import TokenStream
from .help import typing_in_field

INSPECTOR_INTERVAL = 0.25
"""Seconds between inspector redraws while it follows the newest step (the first step draws at once)."""


class ChatViews:
    """Throttled inspector, step numbering and selection, control changes, Esc."""

    _inspector_scheduled = False
    _inspector_last = float("-inf")

    # -- throttled views ----------------------------------------------------------------
    def _schedule_inspector(self) -> None:
        """Draw the newest step now if the last draw is older than the interval, else at its end."""
        if self._inspector_scheduled:
            return
        wait = self._inspector_last + INSPECTOR_INTERVAL - time.monotonic()
        if wait <= 0:
            self._update_inspector()
        else:
            self._inspector_scheduled = True
            self.set_timer(wait, self._update_inspector)

    def _update_inspector(self) -> None:
        self._inspector_scheduled = False
        self._inspector_last = time.monotonic()
        if self.follow and self.steps:
            self.show_step(len(self.steps) - 1)

    def show_step(self, index: int) -> None:
        """The inspector on global step `index`, numbered within its session ("turn 2 · step 3/40")."""
        k = max(0, bisect_right(self.session_starts, index) - 1)
        start = self.session_starts[k] if self.session_starts else 0
        end = self.session_starts[k + 1] if k + 1 < len(self.session_starts) else len(self.steps)
        name = ""
        h = self.sessions[k].header if k < len(self.sessions) else None
        if len(self.sessions) > 1 and h is not None:
            name = one_line(h.label) if h.label else f"turn {h.turn + 1}"
        self.inspector.show(self.steps[index], index - start, self.session_step_total(k, end - start), name,
                            end_ids=self._end_ids(k, index, end))

    def _end_ids(self, session: int, index: int, end: int) -> frozenset[int]:
        """The ids that end a turn, for the inspector: the header's, or in a recording made before headers
        listed them, the textless token that an eos-ended session's last step ended on."""
        st = self.sessions[session] if session < len(self.sessions) else None
        h = getattr(st, "header", None)
        if h is not None and h.end_ids:
            return frozenset(h.end_ids)
        s = getattr(st, "summary", None)
        last = self.steps[index].emitted[-1:] if index == end - 1 else []
        if s is not None and s.stop_reason == "eos" and last and last[0].text == "":
            return frozenset({last[0].id})
        return frozenset()

    def session_step_total(self, session: int, shown: int) -> int:
        """Steps in session `session` for the inspector's "step i/n": those shown (a replay knows them all)."""
        return shown

    def _flush_views(self) -> None:
        self.transcript.flush()
        self.stats_panel.show(self.stats, now=True)
        if self.follow:
            self._update_inspector()
        self.chart.refresh()

    # -- step selection --------------------------------------------------------------
    def on_token_stream_step_selected(self, msg: TokenStream.StepSelected) -> None:
        self.select_step(msg.step)

    def select_step(self, index: int | None) -> None:
        """Pin the inspector on global step `index` (None: follow the latest step again)."""
        if index is None or not self.steps:
            self.follow = True
            self.transcript.selected_step = None
            self._update_inspector()
            return
        index = max(0, min(len(self.steps) - 1, index))
        self.follow = False
        self.transcript.selected_step = index
        self.transcript.scroll_to_step(index)
        self.show_step(index)

    def action_step_select(self, delta: int) -> None:
        if typing_in_field(self.app):
            raise SkipAction()   # Ctrl+←/→ move by word in a field that holds text
        if not self.steps:
            return
        cur = self.transcript.selected_step
        self.select_step(len(self.steps) - 1 if cur is None else cur + delta)

    # -- controls -------------------------------------------------------------------
    def on_controls_panel_changed(self, msg: ControlsPanel.Changed) -> None:
        if self.read_only:
            return
        try:
            self.source.request(settings=msg.settings, sampling=msg.sampling)
        except GammatuneError as exc:
            self.notify(str(exc), severity="error")
            return
        what = msg.settings.method if msg.field == "method" and msg.settings else LABELS.get(msg.field, msg.field)
        self.notify(f"{what}: applies at the next step" if self.generating else f"{what}: used from the next prompt",
                    timeout=2)

    def set_method(self, method: str) -> None:
        """Switch policy (palette commands use this)."""
        if not self.read_only:
            self.controls.submit("method", method)
            self.controls.show_settings(self.controls.settings)

    # -- actions --------------------------------------------------------------------
    def action_stop(self) -> None:
        if self.generating:
            self.stop_requested = True
            self.source.stop()
            self.sub_title = "stopping…"
        elif not self.follow:
            self.select_step(None)
