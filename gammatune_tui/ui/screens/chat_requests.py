"""What the chat asks of its source beyond a prompt: control changes, the pace, a drafter, a system prompt.

`SourceRequests` is the chat screen's one way to its source between (and
during) turns. A change in the controls goes to `source.request()`, which
the source applies at the next step; F9's pace, the palette's drafters and
`/system TEXT` go the same way. What the source can do beyond `EventSource`
(pace, a drafter switch, a system prompt) is asked with `isinstance` of its
optional protocols, so a recording (read-only) is asked nothing. Each request
is answered with a notice saying when it applies; the helper owns no state
but the source's, so the screen keeps what it draws (the pace in its title).
"""

from __future__ import annotations

from typing import Callable, Iterable

from textual.app import SystemCommand
from textual.screen import Screen

from ...engine.common.names import BY_SOURCE, CHAT_DRAFTERS, is_self_draft
from ...engine.policies import grouped_methods
from ...errors import GammatuneError
from ...session.pace import PACES, at_pace_end, next_pace, pace_label
from ...session.source import DrafterSource, EventSource, PacedSource, SystemPromptSource
from ..widgets.controls import LABELS, ControlsPanel


def drafter_help(name: str) -> str:
    """The palette's words for a "Drafter:" entry: what drafts, and for a self-draft only, that it is built first."""
    if is_self_draft(name):
        return (f"Draft with the target's own weights quantized to {name.split(':', 1)[1]} from the next answer on "
                "(a self-draft is built from the target first)")
    spec = BY_SOURCE.get(name)
    if spec is None or spec.loads_draft:
        return "Draft with the pair's draft model from the next answer on"
    return f"Draft with no draft model from the next answer on: {spec.help}"   # the row's own words


class SourceRequests:
    """The requests a chat `screen` sends `source` (see the module docstring); notices go on `screen`.

    `show_pace` gets the pace in force whenever it changes, to draw it.
    """

    def __init__(self, screen: Screen, source: EventSource, show_pace: Callable[[float], None]) -> None:
        self.screen = screen
        self.source = source
        self.read_only = bool(source.read_only)
        self.show_pace = show_pace

    # -- the controls ---------------------------------------------------------------------
    def controls_changed(self, msg: ControlsPanel.Changed, generating: bool) -> None:
        """New settings from the controls: to the source, and a notice saying from when they apply."""
        if self.read_only:
            return
        try:
            self.source.request(settings=msg.settings, sampling=msg.sampling)
        except GammatuneError as exc:
            self.screen.notify(str(exc), severity="error")
            return
        what = msg.settings.method if msg.field == "method" and msg.settings else LABELS.get(msg.field, msg.field)
        self.screen.notify(f"{what}: applies at the next step" if generating else f"{what}: used from the next prompt",
                           timeout=2)

    # -- the system prompt (`/system TEXT` typed in the prompt) ------------------------------
    def set_system_prompt(self, text: str, ready: bool) -> None:
        """The source's system prompt from the next turn ('' removes it); `ready`: the source has loaded."""
        if not isinstance(self.source, SystemPromptSource):
            self.screen.notify("This chat takes no system prompt.", title="System prompt", severity="warning")
            return
        unread = self.source.system_note if ready else ""
        if text.strip() and unread:   # known since loading: say it now, not "set" now and "left out" later
            self.screen.notify(f"No system prompt set: {unread.split(': ', 1)[-1]}.", title="System prompt",
                               severity="warning", timeout=8)
            return
        self.source.set_system(text)
        self.screen.notify(f"System prompt {'set' if text.strip() else 'removed'}: it applies from the next turn "
                           "(/system alone removes it).", title="System prompt", timeout=4)

    # -- pace -------------------------------------------------------------------------
    @property
    def paced(self) -> PacedSource | None:
        """The source, where it can be held back to a pace (a live one; never a recording)."""
        return self.source if not self.read_only and isinstance(self.source, PacedSource) else None

    def step_pace(self, direction: int) -> None:
        """F9 slower (1), Shift+F9 faster (-1); at either end the pace stays, and a notice says why."""
        src = self.paced
        if src is None:
            return
        end = at_pace_end(src.pace, direction)
        if end:
            self.screen.notify(f"pace {end}.", timeout=3)
            return
        self.set_pace(next_pace(src.pace, direction))

    def set_pace(self, steps_per_s: float) -> None:
        """Hold the source to `steps_per_s` (0: full speed)."""
        src = self.paced
        if src is None:
            return
        src.set_pace(steps_per_s)
        self.show_pace(src.pace)
        extra = " (waits are not counted in the timings)" if steps_per_s else ""
        self.screen.notify(f"pace: {pace_label(steps_per_s)}{extra}", timeout=3)

    # -- the drafter ------------------------------------------------------------------------
    def set_drafter(self, name: str) -> bool:
        """Between turns: the next answer drafts with `name` (the source says, as it starts, what it built).

        False where the source switches no drafter (the palette offers drafters only where it can).
        """
        if not isinstance(self.source, DrafterSource):
            return False
        self.source.set_drafter(name)
        self.screen.notify(f"The next answer drafts with {name}.", title="Drafter", timeout=4)
        return True

    # -- the command palette ---------------------------------------------------------------
    def commands(self, set_drafter: Callable[[str], object], set_method: Callable[[str], None]
                 ) -> Iterable[SystemCommand]:
        """Its entries in the palette: drafters, paces and methods, where the source takes them."""
        if not self.read_only and isinstance(self.source, DrafterSource):
            for name in CHAT_DRAFTERS:
                yield SystemCommand(f"Drafter: {name}", drafter_help(name), lambda name=name: set_drafter(name))
        if self.paced is not None:
            for pace in PACES:
                yield SystemCommand(f"Pace: {pace_label(pace)}",
                                    "Hold the generation to this many steps a second (F9)" if pace else
                                    "Let the generation run as fast as it can (F9)",
                                    lambda pace=pace: self.set_pace(pace))
        if not self.read_only:
            for words, names in grouped_methods():
                for m in names:
                    yield SystemCommand(f"Method: {m}", f"Switch the γ policy to {m} ({words}) from the next step",
                                        lambda m=m: set_method(m))
