"""`GammaScreen`: what the app asks of the screen it shows, declared once.

The app shows one main screen (chat, replay or compare) and asks it four
things: which keys F1 lists and under what name (`HELP_KEYS`,
`HELP_TITLE`), whether keys typed while it mounts are kept for its prompt
(`takes_early_keys`), and its own entries in the command palette
(`system_commands`). Each screen subclasses this and overrides what it has,
so the app calls these hooks instead of probing screens for attributes.
`follow_theme` is the screens' one way to draw in the app's theme and redraw
when it changes (`apply_palette`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Generic, Iterable, Protocol, TypeVar, cast

from textual.app import SystemCommand
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget

from ..themes import GammaTheme


class GammaHost(Protocol):
    """What the screens ask of the app beyond Textual's own (`GammaTuneApp`; a protocol, so no screen imports
    the app)."""

    export_dir: Path

    @property
    def gamma_theme(self) -> GammaTheme: ...

    def export_path(self, suffix: str) -> Path: ...


class GammaScreen(Screen):
    """A main screen of `GammaTuneApp` (see the module docstring)."""

    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(key, what it does) rows F1 lists for this screen."""
    HELP_TITLE: ClassVar[str] = ""
    """The screen's name in F1's title ("gammatune chat: keys")."""
    takes_early_keys: bool = False
    """Keys typed before the screen has mounted are kept for its prompt (`GammaTuneApp.take_early_keys`)."""

    @property
    def host(self) -> GammaHost:
        """The app, as the screens use it."""
        return cast(GammaHost, self.app)

    def system_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette (the app adds help, screenshot, themes and quit)."""
        return ()

    def apply_palette(self) -> None:
        """Draw the screen's widgets in the app's theme (`follow_theme` calls it)."""

    def follow_theme(self) -> None:
        """Draw in the app's theme now, and again whenever the theme changes."""
        self.apply_palette()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.apply_palette())


W = TypeVar("W", bound=Widget)


class Child(Generic[W]):
    """A screen's one widget matching `selector`, as a typed attribute looked up on each use.

    `transcript = Child("#transcript", TokenStream)` in a screen's class body:
    `self.transcript` is the widget (a `TokenStream` to the type checker), or
    Textual's `NoMatches` before the screen has composed it.
    """

    def __init__(self, selector: str, kind: type[W]) -> None:
        self.selector = selector
        self.kind = kind

    def __get__(self, node: DOMNode, owner: Any = None) -> W:
        return node.query_one(self.selector, self.kind)
