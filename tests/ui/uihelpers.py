"""UI test helpers (imported by the tests/ui modules): the real app around a synthetic source (no torch), driven by Textual's pilot."""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager

from gammatune_tui.ui.app import make_app
from gammatune_tui.session.synthetic import SyntheticSource

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


@asynccontextmanager
async def gated_chat(released: int = 0, **source_kw):
    """The chat app around a gated 50-step source with prompt "x", `released` steps already drawn.

    Yields (source, pilot, chat screen). Settings given for the source are the controls' too.
    """
    src = gated_source(**{"steps": 50, **source_kw})
    app = make_app(src, prompt="x")
    async with app.run_test(size=SIZE) as pilot:
        chat = app.main_screen
        if released:
            src.gate.release(released)
            await wait_until(pilot, lambda: len(chat.steps) == released, what=f"{released} steps")
        yield src, pilot, chat


@asynccontextmanager
async def finished_chat(steps: int, **app_kw):
    """The chat app once a synthetic `steps`-step session for prompt "x" has finished: (app, pilot, chat)."""
    app = make_app(SyntheticSource(steps=steps), prompt="x", **app_kw)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.main_screen
        await wait_until(pilot, lambda: chat.stats.summary is not None, what="summary")
        yield app, pilot, chat


def emitted_text(events) -> str:
    """Every emitted token's text of the StepEvents in `events`, joined."""
    from gammatune_tui.engine.events import StepEvent

    return "".join(t.text for e in events if isinstance(e, StepEvent) for t in e.emitted)


__all__ = ["run", "wait_until", "gated_source", "gated_chat", "finished_chat", "emitted_text", "make_app", "SyntheticSource", "SIZE"]


def plain(renderable, width: int = 140) -> str:
    """What a Rich renderable (or a Static's content) prints as, without colours."""
    from io import StringIO

    from rich.console import Console

    content = getattr(renderable, "content", renderable)
    console = Console(file=StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(content)
    return console.file.getvalue()
