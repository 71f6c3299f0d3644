"""The `?` / F1 screen: every key, what the colours mean, where things are saved."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..themes import TokenRole

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt (with the conversation so far)"),
    ("Esc", "stop the generation at the next step · unpin the inspector"),
    ("Ctrl+P", "command palette: every action, methods, themes"),
    ("F1 or ?", "this help"),
    ("F2", "save an SVG screenshot"),
    ("F3", "export the transcript as coloured HTML"),
    ("F4", "shade draft tokens by the draft's confidence"),
    ("F5", "chart: last steps / whole history"),
    ("F6", "next theme"),
    ("F7", "show / hide the step inspector"),
    ("Tab / Shift+Tab", "move between prompt, transcript and controls"),
    ("← / → (transcript)", "previous / next step in the inspector; click a token to pick its step"),
    ("Ctrl+← / Ctrl+→", "previous / next step from anywhere"),
    ("↑ / ↓ (a control)", "step the value and apply it"),
    ("Enter (a control)", "apply the typed value (refused in place if invalid)"),
    ("Space , . + - e", "recordings: pause, step back, step forward, faster, slower, to the end"),
    ("Ctrl+Q", "quit"),
)


def render_help(roles: dict[str, TokenRole]) -> Group:
    keys = Table(box=None, show_header=False, padding=(0, 2), pad_edge=False)
    keys.add_column(style="bold", no_wrap=True)
    keys.add_column()
    for k, v in KEYS:
        keys.add_row(k, v)
    colours = Text()
    colours.append("Colours (the paper's Figure 2b): ")
    colours.append("prompt", style=roles["prompt"].style())
    colours.append(" · ")
    colours.append("draft tokens accepted by the target", style=roles["draft"].style())
    colours.append(" · ")
    colours.append("tokens from the target (corrections and bonus)", style=roles["target"].style())
    chart = Text("Chart (Figure 2a): accepted tokens and γ per step, rolling acceptance α on the right axis; "
                 "vertical marks where new settings took effect.")
    return Group(Text("gammatune: keys", style="bold"), Text(""), keys, Text(""), colours, chart,
                 Text(""), Text("Press Esc, F1 or ? to close.", style="italic"))


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 100; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 1 2;
    }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("f1", "dismiss", "Close", show=False),
        Binding("question_mark", "dismiss", "Close", show=False),
    ]

    def __init__(self, roles: dict[str, TokenRole]) -> None:
        super().__init__()
        self.roles = roles

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(render_help(self.roles), id="help-text")

    def action_dismiss(self) -> None:
        self.dismiss(None)
