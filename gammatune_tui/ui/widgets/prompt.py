"""The prompt box: an Input that leaves `?` to the app while it is empty.

Textual gives a focused text field every printable key before any binding
(it drops the app's bindings for them), so `?` for help could never work
from the prompt, where the focus is most of the time. While the prompt is
empty a `?` opens the help; once it holds text, `?` is typed as usual.
"""

from __future__ import annotations

from textual.widgets import Input


class PromptInput(Input):
    """The chat's prompt (see the module docstring)."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "question_mark" and not self.value:
            return False
        return super().check_consume_key(key, character)
