"""The chat's transcript column: loading line, welcome, transcript, step inspector and prompt, and which step shows.

`TranscriptColumn` (`#left` in `ChatLayout`) owns the state its parts
share. Which step the inspector shows: it follows the newest step of the
log until the user picks one (a click on a token, ←/→ in the transcript, or
Ctrl+←/→ from anywhere but a field holding text, where those keys move by
word), and a pick is the transcript's `selected_step` and the inspector's
`follow` set together (`select_step`). The welcome above the transcript (in
the theme's colours, with the load's stages where the subtitle has no room
for them), and the prompt box, which takes back a prompt refused before its
turn began.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ...session.session_log import SessionLog
from ..themes import TokenRole
from .loading_line import LoadingLine
from .prompt import PromptInput
from .step_inspector import StepInspector
from .token_stream import TokenStream


class TranscriptColumn(Vertical):
    """The column showing `log` (see the module docstring); `step_total` counts a session's steps for the
    inspector; `read_only`: a recording's (the prompt disabled)."""

    def __init__(self, log: SessionLog, *, step_total: Callable[[int, int], int], read_only: bool = False,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.session_log, self.step_total, self.read_only = log, step_total, read_only

    def compose(self) -> ComposeResult:
        yield LoadingLine(id="loading")
        yield Static(id="welcome")
        yield TokenStream(id="transcript")
        yield StepInspector(log=self.session_log, step_total=self.step_total, id="inspector")
        yield PromptInput(placeholder="Type a prompt, Enter sends · Esc stops · F1 help · Ctrl+P commands",
                          id="prompt", disabled=self.read_only)

    @property
    def transcript(self) -> TokenStream:
        return self.query_one("#transcript", TokenStream)

    @property
    def inspector(self) -> StepInspector:
        return self.query_one("#inspector", StepInspector)

    # -- which step the inspector shows -----------------------------------------------------
    def on_token_stream_step_selected(self, msg: TokenStream.StepSelected) -> None:
        msg.stop()
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

    def step_by(self, delta: int) -> None:
        """Ctrl+←/→: the inspector on the step before / after the one it shows (from the newest, when following)."""
        if self.session_log.steps:
            cur = self.transcript.selected_step
            self.select_step(len(self.session_log.steps) - 1 if cur is None else cur + delta)

    @property
    def following(self) -> bool:
        """Whether the inspector follows the newest step (no pick holds)."""
        return self.inspector.follow

    # -- the welcome and the prompt -----------------------------------------------------------
    def show_welcome(self, text: Text) -> None:
        self.query_one("#welcome", Static).update(text)

    def give_back(self, prompt: str) -> bool:
        """A prompt refused before its turn began goes back into the box, if the box is empty (a long one as its
        marker again)."""
        box = self.query_one("#prompt", PromptInput)
        if box.value:
            return False
        box.paste(prompt)
        return True

    def set_roles(self, roles: dict[str, TokenRole], background: str, foreground: str) -> None:
        """The theme's colours for the transcript and the inspector."""
        self.transcript.set_palette(roles, background, foreground)
        self.inspector.set_roles(roles)
