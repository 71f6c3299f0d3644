"""The chat's footer: every key it has room for, leaving out the least needed first, so none is cut.

At 80 columns all the chat's keys do not fit: Textual's footer cut the last
ones mid-word. This footer owns which keys it leaves out (`DROP_FIRST`, in
order: the theme, the exports, shading, history…) for its own width, and
recomposes when a resize changes that; every key stays in F1's list and in
the command palette whatever it shows.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer

from ..textual_compat import FooterKey

DROP_FIRST = ("app.next_theme", "app.screenshot_svg", "export_html", "toggle_shade", "toggle_history",
              "toggle_inspector", "app.help")
"""The keys the footer leaves out, in this order, when it is too narrow for all (F6 first; F1 last)."""

PALETTE_KEY_WIDTH = 13
"""Cells the command palette's key takes at the footer's right end ("▏^p palette")."""


class ChatFooter(Footer):
    """The footer, leaving out the least needed keys (DROP_FIRST) when all would not fit, so none is cut.

    Esc, F8, F9 and the replay keys always stay; every key is in F1's list
    and in the command palette whatever the footer shows.
    """

    _left_out: frozenset[str] | None = None

    def _key_widths(self) -> dict[str, int]:
        """Cells each key would take (its key, its description and their padding), by action."""
        widths: dict[str, int] = {}
        for _node, binding, _enabled, _tip in self.screen.active_bindings.values():
            if binding.show and binding.action not in widths:
                widths[binding.action] = len(self.app.get_key_display(binding)) + len(binding.description) + 3
        return widths

    def left_out(self) -> frozenset[str]:
        """The actions whose keys do not fit this footer's width."""
        width = self.size.width or self.app.size.width
        widths = self._key_widths()
        total = sum(widths.values()) + PALETTE_KEY_WIDTH
        out = set()
        for action in DROP_FIRST:
            if total <= width:
                break
            if action in widths:
                total -= widths[action]
                out.add(action)
        return frozenset(out)

    def compose(self) -> ComposeResult:
        self._left_out = out = self.left_out()
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.action in out and "-command-palette" not in widget.classes:
                continue
            yield widget

    def on_resize(self) -> None:
        if self._left_out is not None and self.left_out() != self._left_out:
            self.call_later(self.recompose)
