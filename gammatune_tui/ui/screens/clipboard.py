"""What leaves the app for the user: the copy keys' one way to the clipboard (Textual's OSC 52) and the saved
files (F3's export, the screenshot), each with a notice saying what went where.

Chat, replay and compare copy different text (chat_export.py, compare_copy.py)
but hand it over, and tell the user, the same way; a file that cannot be
written is one error notice, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


def copy_with_notice(screen: Any, text: str, what: str) -> str:
    """Copies `text` through the terminal and says so on `screen`; returns the text (tests read it)."""
    screen.app.copy_to_clipboard(text)
    screen.notify(f"Copied {what} as plain text: {len(text):,} characters "
                  "(through the terminal; if nothing arrives, it does not pass OSC 52 on)", title="Copy", timeout=5)
    return text


def saved_with_notice(owner: Any, write: Callable[[], Path | str], failed: str, folder: object, saved: str,
                      title: str) -> Path | str | None:
    """Runs `write` (it saves a file and returns where) and says so on `owner` (a screen or the app):
    "{saved} {path}", or, when it cannot be written, "{failed} in {folder}: {why}" as an error; None then."""
    try:
        path = write()
    except OSError as exc:
        owner.notify(f"{failed} in {folder}: {exc.strerror or exc}", severity="error")
        return None
    owner.notify(f"{saved} {path}", title=title, timeout=8)
    return path
