"""Model output is untrusted: make it printable before it reaches the terminal.

A token may contain Rich markup, ESC sequences, bells, carriage returns or
bidirectional overrides. The TUI and the printed output only ever show text
through `rich.text.Text` (never markup strings), and every piece first goes
through `printable()`, which turns control characters into visible escapes
such as ``\\x1b`` and ``\\r``. In the TUI, `TokenStream` is where token
text passes through it; labels and headers use `one_line`.
"""

from __future__ import annotations

import re

# C0 and C1 controls (except \n and \t), DEL, bidi overrides/isolates/marks,
# and lone surrogates (which a JSON recording can smuggle in).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x07": "\\a", "\x08": "\\b", "\x0c": "\\f", "\x0b": "\\v", "\x00": "\\0"}
TAB = "    "


def _escape(m: re.Match) -> str:
    ch = m.group(0)
    named = _NAMED.get(ch)
    if named:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every control character shown as a visible escape.

    Newlines are kept (they are part of the conversation) unless
    `keep_newlines` is False, in which case they become ``\\n`` (for one-line
    cells such as the step inspector). Tabs become four spaces.
    """
    out = _UNSAFE.sub(_escape, text)
    if "\t" in out:
        out = out.replace("\t", TAB)
    if not keep_newlines and "\n" in out:
        out = out.replace("\n", "\\n")
    return out


def one_line(text: object) -> str:
    """`str(text)` made printable on a single line (titles, labels, header fields)."""
    return printable(str(text), keep_newlines=False)


END_OF_TURN_LABEL = "⟨end of turn⟩"
"""How a token that ends a turn (`<|im_end|>`, EOS: no text of its own) is named where a step's tokens are listed."""


def token_label(text: str, *, ends_turn: bool = False) -> str:
    """One token for a table cell: escapes, and spaces made visible at the edges.

    `ends_turn`: the token is one of the ids that end a turn (the session
    header's `end_ids`); it has no text, so it is named, never shown as its
    special-token string. Any other token with no text of its own (a piece
    held back until a multi-byte character is complete) is `∅`.
    """
    if ends_turn:
        return END_OF_TURN_LABEL
    s = printable(text, keep_newlines=False)
    if s == "":
        return "∅"
    if s != s.strip(" "):
        s = s.replace(" ", "·")
    return s
