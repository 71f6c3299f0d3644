"""A text field that runs its own editing keys in the order they were typed, even in a burst.

Textual hands a key to the focused field first and runs the field's own
bindings (Ctrl+A "home", Ctrl+K "delete to the end", Enter "submit", ↑/↓ in
a control) only when the key has bubbled back up to the app, a trip through
every container's message queue; a printable key is typed by the field at
once. When keys arrive faster than that trip, as they do while the app is
busy (just after Tab, when the panels are laid out and scrolled: about
0.4 s at 80×24 on a loaded machine) or from a terminal that sends a chunk,
the order breaks: "Ctrl+A Ctrl+K 3 Enter" in a control ran as "3, home,
delete to the end, submit", and the field sent an empty value, losing what
was typed.

`OrderedKeys` runs a key bound by the field itself from the field's own key
handler, in turn with the characters, and stops it there, so it does not
run again at the app. It is what the app would have done anyway: the focused
widget's non-priority bindings come first in Textual's binding chain, and the
app's priority bindings still run before the key reaches the field.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class OrderedKeys(Input):
    """An Input whose own key bindings run in typing order (see the module docstring)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable:   # typed by Input's own handler, next in the MRO
            return
        active = self.screen.active_bindings.get(event.key)
        if active is None or active.node is not self or active.binding.priority or not active.enabled:
            return   # not the field's own (the app's priority keys have run already): it bubbles as before
        event.prevent_default()   # Input's handler must not act on it too
        event.stop()              # nor the app run the binding a second time
        await self.app.run_action(active.binding.action, self)
