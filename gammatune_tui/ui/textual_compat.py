"""Every place gammatune leans on Textual's private names, in one module, so an upgrade breaks here first.

Textual (the supported range is pyproject's `textual` bound) keeps some
widgets in private modules, and its POSIX driver builds its stdin decoder and
its terminal parser from module-level names at input-thread start. gammatune
needs four of those widgets (the footer's keys, to leave some out on narrow
screens; the select's overlay, to style and open it; the toast rack and its
toasts, to hide notices under the command palette), overrides one private
method (`Select._setup_options_renderables`, in `AnnotatedSelect`: the open
list's rows with a dim note beside each, as the method selector names each
method's group) and patches two of those driver names:

- `decode_stdin_tolerantly`: Textual reads stdin with a strict UTF-8
  decoder, so one byte that is not UTF-8 (a binary file pasted into the
  prompt) raised UnicodeDecodeError in its input thread and ended the app
  with a traceback. The driver's decoder is wrapped to decode with
  errors="replace": the byte arrives as "�", and the chat screen says what
  happened when it is sent.
- `install_paste_filter`: the driver's parser gets a `PasteFilter` in front
  (ui/paste_filter.py says why: an ESC inside a bracketed paste was read as
  a key sequence).

`patch_terminal_input` applies both, once per process (the app does so when
it is built). tests/ui/test_textual_compat.py imports every name here and
checks the patches still reach the driver, so a Textual release that moves
them fails that test, not a user's terminal.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from rich.text import Text
from textual.widgets import Select
from textual.widgets._footer import FooterKey
from textual.widgets._select import SelectOverlay
from textual.widgets._toast import Toast, ToastRack
from textual.widgets.option_list import Option

from .paste_filter import PasteFilter

__all__ = ["AnnotatedSelect", "FooterKey", "SelectOverlay", "Toast", "ToastRack", "patch_terminal_input"]


class AnnotatedSelect(Select):
    """A `Select` whose open list shows `note(value)` dim beside each option; the closed select shows the option
    alone. Textual builds the open list in the private `_setup_options_renderables`, so it is overridden here."""

    def note(self, value: object) -> str:
        return ""

    def _setup_options_renderables(self) -> None:
        overlay = self.query_one(SelectOverlay)
        overlay.clear_options()
        overlay.add_options([Option(Text.assemble(str(prompt), (f"  {self.note(value)}", "dim")))
                             for prompt, value in self._options])


def _linux_driver() -> Any:   # the module, whose names mypy does not see (None where there is none)
    """Textual's POSIX driver module, or None where the platform has none."""
    try:
        from textual.drivers import linux_driver
    except ImportError:
        return None
    return linux_driver


def decode_stdin_tolerantly() -> None:
    """Make the driver's stdin decoder turn undecodable bytes into U+FFFD instead of failing (once)."""
    driver = _linux_driver()
    if driver is None:
        return
    strict = driver.getincrementaldecoder
    if getattr(strict, "tolerant", False):
        return

    def tolerant(encoding: str) -> Callable[..., Any]:
        return functools.partial(strict(encoding), errors="replace")

    setattr(tolerant, "tolerant", True)
    driver.getincrementaldecoder = tolerant


def _paste_safe(parser_class: type) -> type:
    class PasteSafeParser(parser_class):
        """The terminal parser with a `PasteFilter` in front of it."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.paste_filter = PasteFilter()

        def feed(self, data: str) -> Iterable:
            if not data:   # the end of input: what is held first
                held = self.paste_filter.flush()
                if held:
                    yield from super().feed(held)
                yield from super().feed(data)
                return
            text = self.paste_filter(data)
            if text:   # "" would tell the parser the input ended
                yield from super().feed(text)

    PasteSafeParser.paste_safe = True
    return PasteSafeParser


def install_paste_filter() -> None:
    """Make the driver parse the terminal's input through a `PasteFilter` (once)."""
    driver = _linux_driver()
    if driver is not None and not getattr(driver.XTermParser, "paste_safe", False):
        driver.XTermParser = _paste_safe(driver.XTermParser)


def patch_terminal_input() -> None:
    """Both patches of the driver's input: tolerant decoding and whole pastes."""
    decode_stdin_tolerantly()
    install_paste_filter()
