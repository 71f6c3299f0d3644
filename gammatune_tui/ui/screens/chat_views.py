"""The chat screen's step selection, controls and Esc: a mixin, so `chat.py` keeps to events and turns.

The inspector (a `StepInspector` over the screen's `SessionLog`) owns which
step it shows: it follows the newest step until the user picks one — a click
on a token, ←/→ in the transcript, or Ctrl+←/→ from anywhere but a field
holding text (where those keys move by word) — and numbers steps within
their session, as the replay player counts them ("turn 2 · step 3/40"). This
mixin turns those keys into the transcript's `selected_step` and the
inspector's `follow`. Control changes go to the source, which applies them
at the next step.

Needs from the screen: `session_log`, `generating`, `read_only`,
`stop_requested`, `source`, `stats`, and the widget properties `transcript`,
`inspector`, `stats_panel`, `chart`, `controls`.
"""

from __future__ import annotations

from textual.actions import SkipAction

from ...errors import GammatuneError
from ..widgets.controls import LABELS, ControlsPanel
from ..widgets.token_stream import TokenStream
from .help import typing_in_field


class ChatViews:
    """Step selection, control changes, Esc; the views brought up to date when a turn ends."""

    def session_step_total(self, session: int, shown: int) -> int:
        """Steps in session `session` for the inspector's "step i/n": those shown (a replay knows them all)."""
        return shown

    def _flush_views(self) -> None:
        self.transcript.flush()
        self.stats_panel.show(self.stats, now=True)
        self.inspector.catch_up()
        self.chart.refresh()

    # -- step selection --------------------------------------------------------------
    def on_token_stream_step_selected(self, msg: TokenStream.StepSelected) -> None:
        self.select_step(msg.step)

    def select_step(self, index: int | None) -> None:
        """Pin the inspector on global step `index` (None: follow the latest step again)."""
        steps = self.session_log.steps
        if index is None or not steps:
            self.transcript.selected_step = None
            self.inspector.follow = True   # drawn at once
            return
        index = max(0, min(len(steps) - 1, index))
        self.inspector.follow = False
        self.transcript.selected_step = index
        self.transcript.scroll_to_step(index)
        self.inspector.show_logged(index)

    def action_step_select(self, delta: int) -> None:
        if typing_in_field(self.app):
            raise SkipAction()   # Ctrl+←/→ move by word in a field that holds text
        if not self.session_log.steps:
            return
        cur = self.transcript.selected_step
        self.select_step(len(self.session_log.steps) - 1 if cur is None else cur + delta)

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
        elif not self.inspector.follow:
            self.select_step(None)
