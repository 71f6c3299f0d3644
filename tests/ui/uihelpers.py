"""UI test helpers (imported by the tests/ui modules): the real app around a synthetic source (no torch), driven by Textual's pilot."""

from __future__ import annotations

import asyncio
import threading
import time

from gammatune_tui.ui.app import make_app
from gammatune_tui.ui.fake_source import SyntheticSource

SIZE = (140, 44)


def run(coro):
    """Run an async pilot scenario from a plain test."""
    return asyncio.run(coro)


async def wait_until(pilot, cond, timeout: float = 15.0, what: str = "condition") -> None:
    """Let the app process messages until `cond()` holds (no timing assertion: just a generous cap)."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def gated_source(**kw) -> SyntheticSource:
    """A source whose steps only go when the test releases permits on `source.gate`."""
    src = SyntheticSource(**kw)
    src.gate = threading.Semaphore(0)
    return src


__all__ = ["run", "wait_until", "gated_source", "make_app", "SyntheticSource", "SIZE"]


def plain(renderable, width: int = 140) -> str:
    """What a Rich renderable (or a Static's content) prints as, without colours."""
    from io import StringIO

    from rich.console import Console

    content = getattr(renderable, "content", renderable)
    console = Console(file=StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(content)
    return console.file.getvalue()
