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

Whether the prompt is empty is decided here, in the prompt's own key order,
not by an app binding: the app hands keys on faster than the prompt types
them, so in a burst ("Is this a question? yes" arriving in one chunk) the
app saw an empty prompt at the `?` and opened the help mid-sentence.

`clean_prompt` is what the screen sends: undecodable bytes as U+FFFD.
"""

from __future__ import annotations

import re

from textual.widgets import Input

UNDECODABLE_NOTICE = ("Part of the prompt was not UTF-8 text (a binary paste?): each undecodable byte was "
                      "sent as � (U+FFFD).")
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_prompt(text: str) -> tuple[str, bool]:
    """The prompt with every undecodable byte as U+FFFD, and whether it held any.

    Bytes that are not UTF-8 reach the app as U+FFFD from the terminal (see
    `decode_stdin_tolerantly`) or as lone surrogates from the command line
    (Python's surrogateescape); a tokenizer refuses the latter with a raw
    TypeError, so both become U+FFFD here, and the screen says so.
    """
    text = _SURROGATE.sub("\ufffd", text)
    return text, "\ufffd" in text


class PromptInput(Input):
    """The chat's prompt (see the module docstring)."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "question_mark" and not self.value:
            return False
        return super().check_consume_key(key, character)

    async def _on_key(self, event) -> None:
        """A `?` into the empty prompt opens the help; any other key goes on to Input's own handler."""
        if event.key == "question_mark" and not self.value:
            event.stop()
            event.prevent_default()   # Input's handler (next in the MRO) does not type it
            self.app.action_help()

    def on_focus(self) -> None:
        take = getattr(self.app, "take_early_keys", None)
        text = take() if callable(take) else ""
        if text:
            self.insert_text_at_cursor(text)
