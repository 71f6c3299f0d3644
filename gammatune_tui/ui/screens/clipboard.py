"""The copy keys' one way to the clipboard: Textual's (OSC 52), and a notice saying what went and how.

Chat, replay and compare copy different text (chat_export.py, compare_copy.py)
but hand it over, and tell the user, the same way.
"""

from __future__ import annotations

from typing import Any


def copy_with_notice(screen: Any, text: str, what: str) -> str:
    """Copies `text` through the terminal and says so on `screen`; returns the text (tests read it)."""
    screen.app.copy_to_clipboard(text)
    screen.notify(f"Copied {what} as plain text: {len(text):,} characters "
                  "(through the terminal; if nothing arrives, it does not pass OSC 52 on)", title="Copy", timeout=5)
    return text
