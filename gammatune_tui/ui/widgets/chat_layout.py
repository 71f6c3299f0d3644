"""The chat's two columns, which of them shows, and the Tab order through both.

`ChatLayout` holds the transcript column (`#left`: loading line, welcome,
transcript, step inspector, prompt) and the `SidePanel` (`#side`: chart,
statistics, controls), and owns how they share the screen. F8 is how every
panel stays reachable on a laptop's 80 columns: below the screen's
`NARROW_BELOW` breakpoint (its `-narrow` class) the layout shows the column
or the panel, and F8 switches (`panels`, drawn as this widget's `-panels`
class); wider, both show and F8 moves the focus to the controls and back.
Tab goes prompt → method → parameters → transcript on every width
(`tab_chain`), showing the panel on the way when they take turns.
"""

from __future__ import annotations

from typing import Any, Iterable

from textual.app import ComposeResult, SystemCommand
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Label

from ...engine.policies import PolicySettings
from ...engine.common.sampling import SamplingConfig
from .acceptance_chart import AcceptanceChart
from .controls import ControlsPanel
from .stats_panel import StatsPanel


class SidePanel(VerticalScroll, can_focus=False):
    """Chart, statistics and controls (from `settings` and `sampling`; `read_only`: a recording's, disabled).

    Not a focus stop itself: Tab goes straight to the controls in it.
    """

    def __init__(self, settings: PolicySettings | None, sampling: SamplingConfig | None, *, read_only: bool = False,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.settings, self.sampling, self.read_only = settings, sampling, read_only

    def compose(self) -> ComposeResult:
        yield Label("Panels · F8 back to the transcript", id="panels-hint")
        yield AcceptanceChart(id="chart")
        yield Label("Statistics", classes="section")
        yield StatsPanel(id="stats")
        yield Label("Controls" + (" (recorded, read-only)" if self.read_only else ""), classes="section")
        yield ControlsPanel(self.settings, self.sampling, read_only=self.read_only, id="controls")


class ChatLayout(Horizontal):
    """The transcript column and the side panel (see the module docstring); `read_only`: a recording (no prompt)."""

    panels: var[bool] = var(False, init=False)
    """Narrow screens: the side panel shows instead of the transcript column (F8 switches; wide screens show both)."""

    def __init__(self, *children: Widget, read_only: bool = False, **kwargs: Any) -> None:
        super().__init__(*children, **kwargs)
        self.read_only = read_only

    def watch_panels(self, panels: bool) -> None:
        self.set_class(panels, "-panels")

    @property
    def narrow(self) -> bool:
        """Below the screen's `NARROW_BELOW`: the column and the panel take turns."""
        return self.screen.has_class("-narrow")

    # -- F8 ---------------------------------------------------------------------------------
    def toggle_panels(self) -> None:
        """Narrow: show the panel (the cursor on the method) or the column again. Wide: the focus goes across."""
        side = self.query_one("#side")
        focused = self.app.focused
        in_side = focused is not None and side in focused.ancestors
        if self.narrow:
            self.panels = not self.panels
            if self.panels:
                self.focus_controls()
            else:
                self.focus_main()
        elif in_side:
            self.focus_main()
        else:
            self.focus_controls()

    def focus_controls(self) -> None:
        """Show the panel if need be and put the cursor on the method."""
        if self.narrow:
            self.panels = True
        # after the refresh that shows the panel, so the focus can scroll the method into view
        self.screen.call_after_refresh(self.query_one("#ctl-method").focus)

    def focus_main(self) -> None:
        """The cursor to the prompt (the transcript for a recording, which has none)."""
        prompt = self.query_one("#prompt")
        (self.query_one("#transcript") if self.read_only or not prompt.display else prompt).focus()

    # -- Tab: prompt → method → parameters → transcript, on any width -------------------------
    def tab_chain(self) -> list[Widget]:
        """The widgets Tab visits, in order: the prompt, the controls (method first), then the rest.

        Below `NARROW_BELOW` the controls and the prompt take turns on screen:
        the hidden side stands in by its first stop (the method, or the prompt),
        and Tab shows it on the way (`tab`).
        """
        chain = list(self.screen.focus_chain)
        side = self.query_one("#side")
        prompt = self.query_one("#prompt")
        in_side = [w for w in chain if side in w.ancestors]
        rest = [w for w in chain if w is not prompt and side not in w.ancestors]
        has_prompt = not self.read_only and bool(prompt.display)
        if self.narrow and not self.read_only:
            if not self.panels:
                in_side = [self.query_one("#ctl-method")]
            else:
                rest = [self.query_one("#transcript")]
        return ([prompt] if has_prompt else []) + in_side + rest

    def tab(self, direction: int) -> Widget | None:
        """Tab (1) or Shift+Tab (-1): the focus to the next stop of `tab_chain`, its side shown first."""
        chain = self.tab_chain()
        if not chain:
            return None
        screen = self.screen
        cur = self.app.focused
        i = chain.index(cur) if cur in chain else (-1 if direction > 0 else 0)
        target = chain[(i + direction) % len(chain)]
        to_side = self.query_one("#side") in target.ancestors
        if self.narrow and to_side != self.panels:
            self.panels = to_side
        # focused now, not after a refresh (`focus()` waits for one): keys typed right after Tab, before the
        # app caught up (0.4 s at 80×24 on a loaded machine), went to the field left behind
        screen.set_focus(target, scroll_visible=False)
        screen.call_after_refresh(self._show_focused, target)   # once it is displayed and laid out
        return target

    def _show_focused(self, widget: Widget) -> None:
        if self.screen.focused is widget:
            widget.scroll_visible(animate=False)

    def panel_commands(self) -> Iterable[SystemCommand]:
        """Its entry in the command palette for F8."""
        yield SystemCommand("Switch transcript / panels", "Chart, statistics and controls on a narrow screen (F8)",
                            self.toggle_panels)

    def focus_commands(self) -> Iterable[SystemCommand]:
        """Its entries in the command palette that move the focus."""
        yield SystemCommand("Focus prompt", "Move the cursor to the prompt box", self.focus_main)
        yield SystemCommand("Focus controls", "Move the cursor to the policy controls (F8)", self.focus_controls)
