"""The F1 / `?` screen (the keys of the screen it was opened on, what the colours mean), the welcome text and the keys every screen shares.

Each screen names its list (`HELP_KEYS`, `HELP_TITLE`): the chat's, the
replay player's and the compare race's keys differ, and F1 shows the one
the user is looking at.

Keys are chosen to work from where the user is, and the prompt has the
focus most of the time: F-keys always work; `?` works from the empty prompt
(`widgets/prompt.py`) and outside text fields; Ctrl+←/→ work unless a text
field that holds text has the focus (there they move by word, as in any
editor). `typing_in_field` is that test.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ...session.stats import ROLLING_STEPS
from ..themes import TokenRole

CHAT_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt (with the conversation so far)"),
    ("/system TEXT", "set the system prompt for the next turns (/system alone removes it; a model without "
                     "a chat template leaves it out and says so)"),
    ("paste", "several lines stay whole: the box shows [paste 1: 3 lines, 58 chars] and Enter sends "
              "the full text"),
    ("Esc", "stop the generation at the next step · unpin the inspector"),
    ("Ctrl+P", "command palette: every action, methods, themes, paces"),
    ("F1", "this help (also ? from the empty prompt or outside a text field)"),
    ("F2", "save an SVG screenshot (the path is shown)"),
    ("F3", "export the transcript as HTML, with the legend, statistics and settings"),
    ("Ctrl+Y", "copy the last answer to the clipboard as plain text (no colours, no end-of-turn token)"),
    ("Ctrl+T", "copy the whole transcript (every turn: your text, then the answer) as plain text"),
    ("F4", "shade draft tokens by the draft's confidence"),
    ("F5", "chart: last steps / whole history"),
    ("F6", "next theme"),
    ("F7", "step inspector: show / hide (under 34 rows: step line → whole table → hidden)"),
    ("F8", "panels: below 100 columns switch between the transcript and the chart, statistics "
           "and controls; wider, move to the controls and back"),
    ("F9 / Shift+F9", "pace: slower / faster (full speed, 10, 4, 2, 1, 0.5 steps a second); "
                      "the waits are not counted in the timings"),
    ("Tab / Shift+Tab", "prompt → method → its parameters → transcript (and back)"),
    ("Ctrl+← / Ctrl+→", "previous / next step in the inspector, unless the focused field holds text "
                        "(there they move by word)"),
    ("← / → (transcript)", "previous / next step; click a token to pick its step"),
    ("↑ / ↓ (a control)", "step the value and apply it"),
    ("Enter (a control)", "apply the typed value (refused in place if invalid)"),
    ("Ctrl+Q", "quit"),
)
"""The chat screen's keys (F1 there)."""

REPLAY_KEYS: tuple[tuple[str, str], ...] = (
    ("Space", "pause / play"),
    (". / ,", "one recorded step forward / back (pauses)"),
    ("+ / -", "play faster / slower"),
    ("e", "play the rest at once"),
    ("Esc", "stop playing · unpin the inspector"),
    ("Ctrl+P", "command palette: every action and theme"),
    ("F1", "this help (also ?)"),
    ("F2", "save an SVG screenshot (the path is shown)"),
    ("F3", "export the transcript as HTML, with the legend, statistics and settings"),
    ("Ctrl+Y", "copy the last answer to the clipboard as plain text"),
    ("Ctrl+T", "copy the whole transcript as plain text"),
    ("F4", "shade draft tokens by the draft's confidence"),
    ("F5", "chart: last steps / whole history"),
    ("F6", "next theme"),
    ("F7", "step inspector: show / hide (under 34 rows: step line → whole table → hidden)"),
    ("F8", "panels: below 100 columns switch between the transcript and the chart, statistics "
           "and recorded settings"),
    ("Ctrl+← / Ctrl+→", "previous / next step in the inspector"),
    ("← / → (transcript)", "previous / next step; click a token to pick its step"),
    ("Ctrl+Q", "quit"),
)
"""The replay screen's keys: the player's, and the chat's views (no prompt, read-only settings)."""

COMPARE_KEYS: tuple[tuple[str, str], ...] = (
    ("← / →", "the previous / next methods, when not all panes fit side by side (the line above the "
              "panes names those shown)"),
    ("1 … 9", "bring method 1 … 9 into view"),
    ("s", "switch between the panes and the ranking (under 34 rows the ranking has its own view)"),
    ("r", "race again: every method replayed at its measured pace"),
    ("Space", "pause / resume the race"),
    ("e", "finish the race at once"),
    ("+ / -", "race faster / slower"),
    ("Esc", "stop measuring after the current step · finish the race"),
    ("Ctrl+Y", "copy the answer of the method in view (the one last clicked or shown with 1–9, else the "
               "leftmost) as plain text"),
    ("Ctrl+T", "copy every method's answer, each under its name, as plain text"),
    ("Ctrl+P", "command palette: every action, each method's pane, themes"),
    ("F1", "this help (also ?)"),
    ("F2", "save an SVG screenshot (the path is shown)"),
    ("F4", "shade draft tokens by the draft's confidence"),
    ("F6", "next theme"),
    ("Ctrl+Q", "quit"),
)
"""The compare screen's keys (compare, and replay of several recordings side by side)."""

KEYS = CHAT_KEYS


def help_bindings() -> list[Binding]:
    """F1 for this help and F2 for a screenshot: the same on every screen (`?` is the app's, see GammaTuneApp)."""
    return [
        Binding("f1", "app.help", "Help"),
        Binding("f2", "app.screenshot_svg", "SVG"),
    ]


def typing_in_field(app: App[object]) -> bool:
    """Whether the focused widget is a text field holding text (where `?` and Ctrl+←/→ belong to the field)."""
    focused = app.focused
    return isinstance(focused, Input) and bool(focused.value)


def colour_key(t: Text, roles: dict[str, TokenRole], prompt: str, draft: str, target: str) -> Text:
    """Appends the three token colours, each named in its own colour, to `t`."""
    t.append(prompt, style=roles["prompt"].style())
    t.append(" · ")
    t.append(draft, style=roles["draft"].style())
    t.append(" · ")
    t.append(target, style=roles["target"].style())
    return t


def welcome_text(roles: dict[str, TokenRole], demo: bool = False, loaded: str = "") -> Text:
    """What a newcomer sees before the first prompt: what to do and what the colours mean.

    `loaded`: the load's time by stage, where the subtitle had no room for it (80 columns); said here, under
    the keys, rather than in an 8-second notice that covered this text.
    """
    t = Text()
    t.append("Type a prompt below and press Enter", style="bold")
    if demo:
        t.append(" (the demo pair writes Python: try ")
        t.append("def parse_args(argv):", style="italic")
        t.append(")")
    t.append(".\nColours: ")
    colour_key(t, roles, "your prompt", "draft tokens the target accepted",
               "tokens the target produced (corrections, bonus)")
    t.append(".\nChange the method or η, δ, τ, γ in the controls while it runs (F8) · F9 pace · Esc stops · "
             "F1 or ? keys · Ctrl+P commands", style="dim")
    if loaded:
        t.append(f"\n{loaded[:1].upper()}{loaded[1:]} (Ctrl+P: Show load times)", style="dim")
    return t


def render_help(roles: dict[str, TokenRole], keys_list: tuple[tuple[str, str], ...] = CHAT_KEYS,
                screen: str = "chat") -> Group:
    """Help for one screen: its keys (`keys_list`), the colours and the chart."""
    keys = Table(box=None, show_header=False, padding=(0, 2), pad_edge=False)
    keys.add_column(style="bold", no_wrap=True)
    keys.add_column()
    for k, v in keys_list:
        keys.add_row(Text(k), Text(v))   # plain text: a key list may hold brackets ("[paste 1: …]")
    colours = Text("Colours (the paper's Figure 2b): ")
    colour_key(colours, roles, "prompt", "draft tokens accepted by the target",
               "tokens from the target (corrections and bonus)")
    chart = Text("Chart (Figure 2a), per step: γ planned by the policy, tokens drafted (below γ where the "
                 "draft stopped early) and accepted, flat over the step's number; rolling α over the last "
                 f"{ROLLING_STEPS} steps on the right axis; vertical marks where new settings took effect.")
    return Group(Text(f"gammatune {screen}: keys", style="bold"), Text(""), keys, Text(""), colours, chart,
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

    def __init__(self, roles: dict[str, TokenRole], keys: tuple[tuple[str, str], ...] = CHAT_KEYS,
                 screen: str = "chat") -> None:
        super().__init__()
        self.roles = roles
        self.keys = keys
        self.screen_name = screen

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(render_help(self.roles, self.keys, self.screen_name), id="help-text")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
