"""GammaTuneApp and `make_app`: the Textual app around any event source.

The app is built by a factory that takes a source, so tests drive the real UI
with a synthetic or recorded source (no torch), and `gammatune chat` passes a
`LiveSource`. The app holds the themes (shipped + user), the command palette
entries and app-wide actions; the chat screen does the rest.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..engine.policies import METHODS, PolicySettings
from ..engine.sampling import SamplingConfig
from ..session.recording import RecordingWriter
from ..session.source import EventSource
from .screens.chat import ChatScreen
from .screens.help import HelpScreen
from .themes import DEFAULT_THEME, GammaTheme, ThemeError, load_themes


class GammaTuneApp(App):
    CSS_PATH = "gammatune.tcss"
    TITLE = "gammatune"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
    ]

    def __init__(self, source: EventSource, *, settings: PolicySettings | None = None,
                 sampling: SamplingConfig | None = None, theme: str | None = None,
                 record: str | os.PathLike | RecordingWriter | None = None, max_new_tokens: int = 256,
                 prompt: str | None = None, export_dir: str | os.PathLike | None = None,
                 theme_dirs: list[Path] | None = None) -> None:
        self.gamma_themes, self.theme_warnings = load_themes(theme_dirs)
        name = theme or DEFAULT_THEME
        if name not in self.gamma_themes:
            raise ThemeError(f"unknown theme {name!r}; available: {', '.join(sorted(self.gamma_themes))}")
        super().__init__()
        self.source = source
        self.initial_theme = name
        self.export_dir = Path(export_dir) if export_dir else Path.cwd()
        self.recorder: RecordingWriter | None
        if isinstance(record, RecordingWriter) or record is None:
            self.recorder = record
        else:
            self.recorder = RecordingWriter(record)
        for gt in self.gamma_themes.values():
            self.register_theme(gt.textual)
        self.theme = name
        self.chat = ChatScreen(source, settings, sampling, max_new_tokens=max_new_tokens, recorder=self.recorder,
                               initial_prompt=prompt, export_dir=self.export_dir)

    # -- themes -------------------------------------------------------------------
    @property
    def gamma_theme(self) -> GammaTheme:
        return self.gamma_themes.get(self.theme) or self.gamma_themes[DEFAULT_THEME]

    def get_theme_variable_defaults(self) -> dict[str, str]:
        roles = self.gamma_themes[DEFAULT_THEME].roles if hasattr(self, "gamma_themes") else None
        if roles is None:
            return {"token-prompt": "#5b9cff", "token-draft": "#3ccf6e", "token-target": "#ff5c5c"}
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
        self.push_screen(self.chat)
        for w in self.theme_warnings:
            self.notify(w, title="Theme skipped", severity="warning", timeout=8)

    def on_unmount(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        close = getattr(self.source, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # shutting down: nothing useful to report
                pass

    # -- actions ------------------------------------------------------------------
    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(self.gamma_theme.roles))

    def action_screenshot_svg(self) -> str | None:
        name = time.strftime("gammatune-%Y%m%d-%H%M%S.svg")
        try:
            path = self.save_screenshot(filename=name, path=str(self.export_dir))
        except OSError as exc:
            self.notify(f"Could not save the screenshot: {exc.strerror or exc}", severity="error")
            return None
        self.notify(f"Screenshot saved to {path}", title="Screenshot")
        return path

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        chat = self.chat
        yield SystemCommand("Stop generation", "End the running generation at the next step (Esc)", chat.action_stop)
        yield SystemCommand("Help: keys", "Show every key binding (F1 or ?)", self.action_help)
        yield SystemCommand("Save SVG screenshot", "Write the current screen to an .svg file (F2)",
                            self.action_screenshot_svg)
        yield SystemCommand("Export transcript to HTML", "Write the coloured transcript to an .html file (F3)",
                            chat.action_export_html)
        yield SystemCommand("Toggle confidence shading", "Shade draft tokens by the draft's confidence (F4)",
                            chat.action_toggle_shade)
        yield SystemCommand("Toggle chart history", "Last steps or the whole session in the chart (F5)",
                            chat.action_toggle_history)
        yield SystemCommand("Toggle step inspector", "Show or hide the step inspector (F7)",
                            chat.action_toggle_inspector)
        yield SystemCommand("Inspect latest step", "Let the inspector follow the newest step again",
                            lambda: chat.select_step(None))
        yield SystemCommand("Focus prompt", "Move the cursor to the prompt box",
                            lambda: chat.query_one("#prompt").focus())
        yield SystemCommand("Focus controls", "Move the cursor to the policy controls",
                            lambda: chat.query_one("#ctl-method").focus())
        if not chat.read_only:
            for m in METHODS:
                yield SystemCommand(f"Method: {m}", f"Switch the γ policy to {m} from the next step",
                                    lambda m=m: chat.set_method(m))
        for name in sorted(self.gamma_themes):
            gt = self.gamma_themes[name]
            yield SystemCommand(f"Theme: {name}", gt.description or f"Switch to the {name} theme",
                                lambda name=name: self.set_theme(name))
        if chat.read_only and hasattr(self.source, "toggle_pause"):
            yield SystemCommand("Pause / resume replay", "Space", chat.action_toggle_pause)
            yield SystemCommand("Step forward", "Next recorded step (.)", chat.action_step_forward)
            yield SystemCommand("Step back", "Previous recorded step (,)", chat.action_step_back)
            yield SystemCommand("Jump to end", "Play the rest at once (e)", chat.action_jump_end)
        yield SystemCommand("Quit", "Quit gammatune (Ctrl+Q)", self.action_quit)


def make_app(source: EventSource, **kwargs) -> GammaTuneApp:
    """The app around `source`; keyword arguments as for `GammaTuneApp`.

    settings / sampling: initial control values (should match the source's);
    theme: a theme name; record: path or RecordingWriter for every event;
    max_new_tokens; prompt: sent as soon as the source is ready; export_dir:
    where screenshots and HTML exports go; theme_dirs: extra theme folders.
    """
    return GammaTuneApp(source, **kwargs)
