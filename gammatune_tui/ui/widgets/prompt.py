"""The prompt box: an Input that leaves `?` to the app while it is empty, and takes what was typed before it had the focus.

Textual gives a focused text field every printable key before any binding
(it drops the app's bindings for them), so `?` for help could never work
from the prompt, where the focus is most of the time. While the prompt is
empty a `?` opens the help; once it holds text, `?` is typed as usual.

A user who types as soon as `gammatune chat` opens types before the screen
has mounted and before this box has the focus: the app keeps those keys
(`GammaTuneApp.take_early_keys`) and the box types them in when it first
gets the focus, so "Is this a question? yes" arrives whole and no `?` opens
the help on the way; an Enter typed last among them sends it (it was lost).

Whether the prompt is empty is decided here, in the prompt's own key order,
not by an app binding: the app hands keys on faster than the prompt types
them, so in a burst ("Is this a question? yes" arriving in one chunk) the
app saw an empty prompt at the `?` and opened the help mid-sentence.

A paste of several lines (code, a document) stays whole: the one-line box
cannot show it, so it holds a marker in its place, `[paste 1: 3 lines,
58 chars]`, and Enter sends the prompt with every marker replaced by its
text (Textual's Input would keep the first line only and drop the rest
without a word). A marker costs the same whatever the paste's size, so a
20,000-line paste does not stall the box. Text typed around a marker is
kept around the paste. A marker the user edited away sends nothing of its
paste, and the screen says so (`expand_pastes`'s notices): nothing is
dropped without a notice.

Enter is decided here too: the box refuses, with a notice, a prompt while
the models failed to load (`load_error`) or while a turn runs (`busy`; a
`/system` command goes through), both set down by the screen, and posts
what is to be sent up as `Sent` (the pastes in place, the box emptied).
`clean_prompt` is what the screen sends: undecodable bytes as U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

from textual import events
from textual.message import Message
from textual.widgets import Input

from ..paste_filter import ESC, SHOWN_ESC
from .key_order import OrderedKeys

UNDECODABLE_NOTICE = ("Part of the prompt was not UTF-8 text (a binary paste?): each undecodable byte was "
                      "sent as � (U+FFFD).")
_SURROGATE = re.compile("[\ud800-\udfff]")


def paste_marker(number: int, text: str) -> str:
    """What the box shows in place of a multi-line paste: '[paste 1: 3 lines, 58 chars]'."""
    return f"[paste {number}: {len(text.splitlines()):,} lines, {len(text):,} chars]"


_MARKER = re.compile(r"\[paste (\d+): [\d,]+ lines, [\d,]+ chars\]")


def normalise_newlines(text: str) -> str:
    """A paste's line ends as \\n (terminals and Windows clipboards send \\r\\n or a bare \\r)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def expand_pastes(value: str, pastes: list[str]) -> tuple[str, list[str]]:
    """The prompt to send: each intact marker in `value` replaced by its paste; and a notice per paste left out.

    One pass over the typed text, so a paste that itself holds a marker's words is sent as it is."""
    sent: set[int] = set()

    def expand(m: re.Match) -> str:
        k = int(m.group(1))
        if 1 <= k <= len(pastes) and m.group(0) == paste_marker(k, pastes[k - 1]):
            sent.add(k)
            return pastes[k - 1]
        return m.group(0)

    value = _MARKER.sub(expand, value)
    notices = [f"Paste {k} ({len(text.splitlines()):,} lines) was not sent: its marker was edited out of "
               "the prompt. Paste it again to send it." for k, text in enumerate(pastes, start=1) if k not in sent]
    return value, notices


SYSTEM_COMMAND = "/system"
"""Typed first in the prompt: the rest is the system prompt for the next turns (alone: none)."""


def is_system_command(value: str) -> bool:
    """Whether the prompt's text is `/system` or `/system TEXT` (not a prompt that starts with '/systems')."""
    head = value.lstrip()
    return head.startswith(SYSTEM_COMMAND) and (len(head) == len(SYSTEM_COMMAND) or head[len(SYSTEM_COMMAND)].isspace())


def system_command_text(value: str) -> str:
    """The system prompt a `/system TEXT` command sets ('' for `/system` alone)."""
    return value.lstrip()[len(SYSTEM_COMMAND):].strip()


def clean_prompt(text: str) -> tuple[str, bool]:
    """The prompt with every undecodable byte as U+FFFD, and whether it held any.

    Bytes that are not UTF-8 reach the app as U+FFFD from the terminal (see
    `textual_compat.decode_stdin_tolerantly`) or as lone surrogates from the command line
    (Python's surrogateescape); a tokenizer refuses the latter with a raw
    TypeError, so both become U+FFFD here, and the screen says so.
    """
    text = _SURROGATE.sub("\ufffd", text)
    return text, "\ufffd" in text


class PromptInput(OrderedKeys):
    """The chat's prompt (see the module docstring). `pastes` holds the multi-line pastes its markers stand for."""

    class Sent(Message):
        """Enter with something to send: a prompt, or (`system`) the text of a `/system` command."""

        def __init__(self, text: str, system: bool = False) -> None:
            super().__init__()
            self.text = text
            self.system = system

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pastes: list[str] = []
        self.load_error = ""
        """Why the models did not load ('' while they may): a prompt is refused with it (set by the screen)."""
        self.busy = False
        """A turn is running: a prompt is refused until Esc has stopped it (set by the screen)."""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: refused with a notice, or posted up as `Sent` and the box emptied (see the module docstring)."""
        event.stop()
        if not event.value.strip():
            return
        command = is_system_command(event.value)
        if self.load_error and not command:
            self.notify(f"The models did not load: {self.load_error}", severity="error")
            return
        if self.busy and not command:
            self.notify("A generation is running: press Esc to stop it, then send.", severity="warning")
            return
        text, notices = self.take_prompt()   # pastes whole, box emptied
        for notice in notices:
            self.notify(notice, title="Prompt", severity="warning", timeout=10)
        if command:
            self.post_message(self.Sent(system_command_text(text), system=True))
        elif text.strip():
            self.post_message(self.Sent(text))

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()   # Input's own handler (next in the MRO) would insert the first line again
        if event.text:
            self.paste(event.text)

    def action_paste(self) -> None:
        """Ctrl+V: the app's own clipboard, kept whole as a terminal paste is."""
        self.paste(self.app.clipboard)

    def paste(self, text: str) -> None:
        """Insert `text` at the cursor (over a selection): as itself when one line, as a marker when several."""
        text = normalise_newlines(text).replace(ESC, SHOWN_ESC)   # as the terminal's pastes arrive (paste_filter)
        if "\n" in text.rstrip("\n"):
            self.pastes.append(text)
            text = paste_marker(len(self.pastes), text)
        else:
            text = text.rstrip("\n")
        start, end = sorted(self.selection)
        self.replace(text, start, end)

    def take_prompt(self) -> tuple[str, list[str]]:
        """What Enter sends (the markers replaced by their pastes) and the notices; empties the box."""
        text, notices = expand_pastes(self.value, self.pastes)
        self.pastes = []
        self.value = ""
        return text, notices

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "question_mark" and not self.value:
            return False
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        """A `?` into the empty prompt opens the help; any other key goes on to Input's own handler."""
        if event.key == "question_mark" and not self.value:
            event.stop()
            event.prevent_default()   # Input's handler (next in the MRO) does not type it
            await self.app.run_action("help")

    def on_focus(self) -> None:
        take = getattr(self.app, "take_early_keys", None)
        text = take() if callable(take) else ""
        if text.endswith("\r"):   # Enter was the last key typed early: send what came before it
            self.insert_text_at_cursor(text[:-1].replace("\r", ""))
            self.post_message(self.Submitted(self, self.value))
        elif text:   # an Enter in the middle: the text is kept, to be sent with the next Enter
            self.insert_text_at_cursor(text.replace("\r", ""))
