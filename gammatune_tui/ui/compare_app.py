"""The app around a CompareScreen: GammaTuneApp's themes and help, the compare palette."""

from __future__ import annotations

from textual.app import SystemCommand

from .app import GammaTuneApp
from .screens.compare import CompareScreen


class CompareApp(GammaTuneApp):
    """GammaTuneApp showing a CompareScreen instead of the chat screen."""

    CSS_PATH = "gammatune.tcss"  # resolved beside this module (it sits beside app.py)

    def __init__(self, screen: CompareScreen, *, theme: str | None = None) -> None:
        super().__init__(None, theme=theme)  # type: ignore[arg-type]  (the chat screen is never shown)
        self.compare = screen

    def on_mount(self, event) -> None:
        event.prevent_default()
        self.push_screen(self.compare)
        for w in self.theme_warnings:
            self.notify(w, title="Theme skipped", severity="warning", timeout=8)

    def get_system_commands(self, screen):
        c = self.compare
        yield SystemCommand("Race again", "Replay every method at its measured pace (r)", c.action_restart)
        yield SystemCommand("Pause / resume race", "Space", c.action_toggle_pause)
        yield SystemCommand("Finish race", "Show the end at once (e)", c.action_finish)
        yield SystemCommand("Help: keys", "Show every key binding (F1 or ?)", self.action_help)
        yield SystemCommand("Save SVG screenshot", "Write the current screen to an .svg file (F2)",
                            self.action_screenshot_svg)
        for name in sorted(self.gamma_themes):
            gt = self.gamma_themes[name]
            yield SystemCommand(f"Theme: {name}", gt.description or f"Switch to the {name} theme",
                                lambda name=name: self.set_theme(name))
        yield SystemCommand("Quit", "Quit gammatune (Ctrl+Q)", self.action_quit)
