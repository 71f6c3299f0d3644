"""GammaTuneApp, the one Textual app, and the factories that give it its screen.

The app holds what every screen shares: the themes (shipped + user), help
(F1 always; `?` wherever it is not typed into a field), screenshots, where
exports go (`default_export_dir`: out of the working tree, so a screenshot
never lands in someone's repository), and the command palette's app-wide
entries.
What it shows is the screen it is given — the chat screen around any event
source (`make_app`), a recording in the replay screen (`make_replay_app`), or
the compare screen measuring a job or racing recorded runs
(`make_compare_app`, `make_compare_replay_app`). Tests drive the real UI
through the same factories with a synthetic or recorded source (no models).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterable, Sequence

from textual.notifications import SeverityLevel
from textual import events
from textual.actions import SkipAction
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.css.query import NoMatches
from textual.markup import escape
from textual.screen import Screen

from ..session.compare import MethodRun
from ..session.compare_job import CompareJob
from ..session.recording import Recording, RecordingWriter
from ..session.replay import ReplaySource
from ..session.source import EventSource
from .screens.base import GammaScreen
from .screens.chat import ChatScreen
from .screens.clipboard import saved_with_notice
from .screens.compare import CompareScreen
from .screens.help import HelpScreen, typing_in_field
from .screens.replay import ReplayChatScreen
from .textual_compat import ToastRack, patch_terminal_input
from .themes import DEFAULT_THEME, GammaTheme, ThemeError, load_themes
from .widgets.prompt import PromptInput


EXPORT_DIR_ENV = "GAMMATUNE_EXPORT_DIR"
EARLY_ENTER = "\r"
"""An Enter typed before the prompt had the focus, among the early keys (`take_early_keys`)."""
EARLY_ENTER_KEYS = ("enter", "ctrl+j")
"""Keys read as that Enter: typed before the app put the terminal in raw mode, the terminal's line
discipline turned the Enter into a newline, which arrives as ctrl+j."""


def default_export_dir() -> Path:
    """Where F2 and F3 write: $GAMMATUNE_EXPORT_DIR, else $XDG_DATA_HOME/gammatune/exports (~/.local/share/…)."""
    env = os.environ.get(EXPORT_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser().resolve()
    data = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(data).expanduser() if data else Path.home() / ".local" / "share"
    return (base / "gammatune" / "exports").resolve()


class GammaTuneApp(App):
    """The app around `screen` (its main screen: chat, replay or compare)."""

    CSS_PATH = "gammatune.tcss"
    TITLE = "gammatune"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
        # priority, so it works from an empty prompt; typed into a field that holds text
        Binding("question_mark", "help_key", "Help", priority=True, show=False),
    ]

    def __init__(self, screen: GammaScreen, *, theme: str | None = None, export_dir: str | os.PathLike | None = None,
                 theme_dirs: list[Path] | None = None) -> None:
        self.gamma_themes, self.theme_warnings = load_themes(theme_dirs)
        name = theme or DEFAULT_THEME
        if name not in self.gamma_themes:
            raise ThemeError(f"unknown theme {name!r}; available: {', '.join(sorted(self.gamma_themes))}")
        super().__init__()
        patch_terminal_input()   # stdin decoded tolerantly, pastes whole (textual_compat)
        self.main_screen = screen
        # printable keys typed before the prompt has the focus (the screen still mounting): kept for the prompt
        self._early_keys: list[str] | None = [] if screen.takes_early_keys else None
        self._under_palette: Screen | None = None   # the screen under an open command palette
        self.export_dir = Path(export_dir).expanduser().resolve() if export_dir else default_export_dir()
        for gt in self.gamma_themes.values():
            self.register_theme(gt.textual)
        self.theme = name

    # -- themes -------------------------------------------------------------------
    @property
    def gamma_theme(self) -> GammaTheme:
        return self.gamma_themes.get(self.theme) or self.gamma_themes[DEFAULT_THEME]

    def get_theme_variable_defaults(self) -> dict[str, str]:
        roles = self.gamma_themes[DEFAULT_THEME].roles   # set before Textual's __init__ asks
        return {f"token-{r}": roles[r].color for r in ("prompt", "draft", "target")}

    def set_theme(self, name: str) -> None:
        if name not in self.gamma_themes:
            self.notify(f"unknown theme {name!r}", severity="error")
            return
        self.theme = name

    def action_next_theme(self) -> None:
        names = sorted(self.gamma_themes)
        cur = names.index(self.theme) if self.theme in names else -1
        self.set_theme(names[(cur + 1) % len(names)])
        self.notify(f"theme: {self.theme}", timeout=2)

    # -- lifecycle ----------------------------------------------------------------
    def on_mount(self) -> None:
        self.push_screen(self.main_screen)
        for w in self.theme_warnings:
            self.notify(w, title="Theme skipped", severity="warning", timeout=8)

    async def on_event(self, event: events.Event) -> None:
        """Until the chat's prompt has the focus, printable keys are kept for it (`take_early_keys`).

        A user who starts typing as soon as `gammatune chat` opens types while
        the screen is still mounting: without this, `?` opened the help and
        the rest of the text went nowhere. An Enter among them is kept too
        (`EARLY_ENTER`): the prompt sends what came before it.
        """
        if (self._early_keys is not None and isinstance(event, events.Key) and not event.is_forwarded
                and ((event.is_printable and event.character) or event.key in EARLY_ENTER_KEYS)):
            self._early_keys.append(EARLY_ENTER if event.key in EARLY_ENTER_KEYS else event.character or "")
            event.stop()
            return
        await super().on_event(event)

    def take_early_keys(self) -> str:
        """The text typed before the prompt had the focus; from now on keys go where the focus is."""
        keys, self._early_keys = self._early_keys or [], None
        return "".join(keys)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """A notice, its text shown as written (`markup` is ignored, whoever asks: a widget's notify passes True).

        Notices quote paths, prompts, model names and errors; `[/]` in one of
        them read as markup ended the app with a MarkupError.
        """
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def on_command_palette_opened(self, _msg: CommandPalette.Opened) -> None:
        """The notices wait while the palette is open; they show again when it closes, if their time has not run out.

        Drawn over the palette's search field and list (80×24: the 8-second
        "Loaded" notice hid what was typed). The palette's own notices are
        hidden by gammatune.tcss; the screen under it is not restyled while
        covered, so its rack is hidden here.
        """
        self._under_palette = self.screen_stack[-2] if len(self.screen_stack) > 1 else None
        self._show_notices(self._under_palette, False)

    def on_command_palette_closed(self, _msg: CommandPalette.Closed) -> None:
        under, self._under_palette = self._under_palette, None
        self._show_notices(under, True)

    @staticmethod
    def _show_notices(screen: Screen | None, shown: bool) -> None:
        if screen is None:
            return
        try:
            screen.get_child_by_type(ToastRack).display = shown
        except NoMatches:   # notifications off (tests), or not mounted yet
            pass

    # -- actions ------------------------------------------------------------------
    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:   # the keys of the screen in view (the main one under, say, the palette)
            screen = self.screen if isinstance(self.screen, GammaScreen) else self.main_screen
            self.push_screen(HelpScreen(self.gamma_theme.roles, screen.HELP_KEYS, screen.HELP_TITLE))

    def action_help_key(self) -> None:
        if typing_in_field(self) or isinstance(self.focused, PromptInput):
            raise SkipAction()   # a `?` typed into text stays a `?`; the prompt decides for itself, in its key order
        self.action_help()

    def export_path(self, suffix: str) -> Path:
        """A new file in the export folder (created if need be), named for the time: gammatune-YYYYmmdd-HHMMSS."""
        self.export_dir.mkdir(parents=True, exist_ok=True)
        stem = time.strftime("gammatune-%Y%m%d-%H%M%S")
        path = self.export_dir / f"{stem}{suffix}"
        n = 1
        while path.exists():
            n += 1
            path = self.export_dir / f"{stem}-{n}{suffix}"
        return path

    def action_screenshot_svg(self) -> str | None:
        def write() -> str:
            target = self.export_path(".svg")
            return self.save_screenshot(filename=target.name, path=str(target.parent))

        saved = saved_with_notice(self, write, "Could not save the screenshot", self.export_dir,
                                  "Screenshot saved to", "Screenshot")
        return str(saved) if saved is not None else None

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The main screen's own commands, then help, screenshot, themes and quit.

        The palette reads each title and help as markup; the main screen's
        name models, drafters and recorded labels, so they are escaped.
        """
        for cmd in self.main_screen.system_commands():
            yield SystemCommand(escape(cmd.title), escape(cmd.help), cmd.callback, cmd.discover)
        yield SystemCommand("Help: keys", "Show every key binding (F1, or ? outside text)", self.action_help)
        yield SystemCommand("Save SVG screenshot", "Write the current screen to an .svg file (F2)",
                            self.action_screenshot_svg)
        for name in sorted(self.gamma_themes):
            gt = self.gamma_themes[name]
            yield SystemCommand(f"Theme: {name}", gt.description or f"Switch to the {name} theme",
                                lambda name=name: self.set_theme(name))
        yield SystemCommand("Quit", "Quit gammatune (Ctrl+Q)", self.action_quit)


# -- the factories: one per screen -------------------------------------------------------------
def make_app(source: EventSource, *, theme: str | None = None, record: str | os.PathLike | None = None,
             prompt: str | None = None, export_dir: str | os.PathLike | None = None,
             theme_dirs: list[Path] | None = None) -> GammaTuneApp:
    """The chat app around `source` (live, synthetic or recorded).

    record: a JSONL file that gets every event; prompt: sent as soon as the
    source is ready; export_dir: where screenshots and HTML exports go;
    theme_dirs: extra theme folders. The controls start from the source's settings.
    """
    screen = ChatScreen(source, initial_prompt=prompt)
    app = GammaTuneApp(screen, theme=theme, export_dir=export_dir, theme_dirs=theme_dirs)
    if record is not None:   # after the theme check: a typo in --theme must not truncate the file
        screen.turns.recorder = RecordingWriter(record)
    return app


def make_replay_app(recording: Recording, *, speed: float = 1.0, paused: bool = False, theme: str | None = None,
                    export_dir: str | os.PathLike | None = None) -> GammaTuneApp:
    """A recording played in the replay screen, with the player keys."""
    source = ReplaySource(recording, speed=speed, paused=paused)
    return GammaTuneApp(ReplayChatScreen(source), theme=theme, export_dir=export_dir)


def make_compare_app(job: CompareJob, *, title: str = "compare", speed: float = 1.0,
                     theme: str | None = None) -> GammaTuneApp:
    """The compare screen measuring `job` (its worker loads the pair), then racing the methods."""
    return GammaTuneApp(CompareScreen(job.methods, job=job, speed=speed, title=title), theme=theme)


def make_compare_replay_app(runs: Sequence[MethodRun], *, speed: float = 1.0, paused: bool = False,
                            theme: str | None = None, title: str = "replay: compare",
                            warnings: Sequence[str] = ()) -> GammaTuneApp:
    """Recorded sessions side by side, raced at their recorded pace."""
    screen = CompareScreen([r.label for r in runs], runs=runs, speed=speed, paused=paused, title=title,
                           warnings=warnings)
    return GammaTuneApp(screen, theme=theme)
