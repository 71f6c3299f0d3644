"""The prompt box: an Input that leaves `?` to the app while it is empty, and takes what was typed before it had the focus.

Textual gives a focused text field every printable key before any binding
(it drops the app's bindings for them), so `?` for help could never work
from the prompt, where the focus is most of the time. While the prompt is
empty a `?` opens the help; once it holds text, `?` is typed as usual.

A user who types as soon as `gammatune chat` opens types before the screen
has mounted and before this box has the focus: the app keeps those keys
(`GammaTuneApp.take_early_keys`) and the box types them in when it first
gets the focus, so "Is this a question? yes" arrives whole and no `?` opens
the help on the way.
"""

from __future__ import annotations

from textual.widgets import Input


class PromptInput(Input):
    """The chat's prompt (see the module docstring)."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "question_mark" and not self.value:
            return False
        return super().check_consume_key(key, character)

    def on_focus(self) -> None:
        take = getattr(self.app, "take_early_keys", None)
        text = take() if callable(take) else ""
        if text:
            self.insert_text_at_cursor(text)
