"""The chat screen's step selection and what it sends its source: the controls, Esc, pace, drafter, system prompt.

The inspector (a `StepInspector` over the screen's `SessionLog`) owns which
step it shows: it follows the newest step until the user picks one — a click
on a token, ←/→ in the transcript, or Ctrl+←/→ from anywhere but a field
holding text (where those keys move by word) — and numbers steps within
their session, as the replay player counts them ("turn 2 · step 3/40"). This
layer turns those keys into the transcript's `selected_step` and the
inspector's `follow`. Control changes go to the source, which applies them
at the next step; so do F9's pace, the palette's drafters and `/system`.
What the source can do beyond `EventSource` (pace, a system prompt, a
drafter switch) is asked with `isinstance` of its optional protocols.

A layer of the chat screen over `ChatBase` (chat_base.py), which declares
what it uses.
"""

from __future__ import annotations

from textual.actions import SkipAction

from ...errors import GammatuneError
from ...session.pace import at_pace_end, next_pace, pace_label
from ...session.source import DrafterSource, PacedSource, SystemPromptSource
from ..widgets.controls import LABELS, ControlsPanel
from ..widgets.token_stream import TokenStream
from .chat_base import ChatBase
from .help import typing_in_field


class ChatViews(ChatBase):
    """Step selection; control changes, Esc, pace, drafter and system prompt sent to the source."""

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

    # -- the system prompt (`/system TEXT` typed in the prompt) ------------------------------
    def set_system_prompt(self, text: str) -> None:
        """The source's system prompt from the next turn ('' removes it)."""
        if not isinstance(self.source, SystemPromptSource):
            self.notify("This chat takes no system prompt.", title="System prompt", severity="warning")
            return
        unread = self.source.system_note if self.ready else ""
        if text.strip() and unread:   # known since loading: say it now, not "set" now and "left out" later
            self.notify(f"No system prompt set: {unread.split(': ', 1)[-1]}.", title="System prompt",
                        severity="warning", timeout=8)
            return
        self.source.set_system(text)
        self.notify(f"System prompt {'set' if text.strip() else 'removed'}: it applies from the next turn "
                    "(/system alone removes it).", title="System prompt", timeout=4)

    # -- pace -------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "pace":
            return self.can_pace
        return True

    @property
    def can_pace(self) -> bool:
        return self.paced is not None

    @property
    def paced(self) -> PacedSource | None:
        """The source, where it can be held back to a pace (a live one; never a recording)."""
        return self.source if not self.read_only and isinstance(self.source, PacedSource) else None

    def action_pace(self, direction: int = 1) -> None:
        """F9 slower, Shift+F9 faster; at either end the pace stays, and a notice says why."""
        src = self.paced
        if src is None:
            return
        end = at_pace_end(src.pace, direction)
        if end:
            self.notify(f"pace {end}.", timeout=3)
            return
        self.set_pace(next_pace(src.pace, direction))

    def set_drafter(self, name: str) -> None:
        """Between turns: the next answer drafts with `name` (the source says, as it starts, what it built)."""
        if not isinstance(self.source, DrafterSource):   # the palette offers drafters only where it can
            return
        self.source.set_drafter(name)
        self.subtitle.drafter_switched = True   # the subtitle names the drafter each answer ran with from now on
        self.notify(f"The next answer drafts with {name}.", title="Drafter", timeout=4)

    def set_pace(self, steps_per_s: float) -> None:
        src = self.paced
        if src is None:
            return
        src.set_pace(steps_per_s)
        self.pace = src.pace   # the title follows (ChatScreen.watch_pace)
        extra = " (waits are not counted in the timings)" if steps_per_s else ""
        self.notify(f"pace: {pace_label(steps_per_s)}{extra}", timeout=3)
