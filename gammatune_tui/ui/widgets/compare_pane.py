"""One method's pane on the compare screen: transcript, chart and stats, shown up to where the race has reached.

The race's clock (`session.race_clock.RaceClock`) says how many of the run's
events are due and the pane's place; the pane draws them.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, Static

from ...engine.events import SessionHeader, StepEvent
from ...render.safe_text import one_line
from ...session.compare import MethodRun
from ...session.session_log import SessionLog
from ...session.stats import RunningStats
from .acceptance_chart import AcceptanceChart
from .token_stream import TokenStream

ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th")


def ordinal(place: int) -> str:
    """'1st' for place 0, and so on."""
    return ORDINALS[place] if place < len(ORDINALS) else f"{place + 1}th"


def pane_stats(stats: RunningStats) -> Text:
    """A pane's numbers (the same RunningStats the summary ranks)."""
    s = stats
    t = Text()
    t.append(f"{s.tokens_per_s:,.1f}", style="bold")
    t.append(" tok/s", style="dim")
    t.append(f" · α {s.acceptance_rate:.2f}\n")
    t.append(f"{s.tokens_per_step:.2f}", style="bold")
    t.append(" tok/step", style="dim")
    t.append(f" · γ̄ {s.mean_gamma:.1f}\n")
    t.append(f"target {s.target_calls} · draft {s.draft_calls}", style="dim")
    t.append(f"\n{s.tokens} tokens · {s.elapsed_s:.2f} s", style="dim")
    return t


class MethodPane(Vertical):
    """Transcript, chart and stats of one method; shown up to the event the race has reached."""

    DEFAULT_CSS = """
    MethodPane { width: 1fr; min-width: 16; border-right: vkey $panel; }
    MethodPane .pane-title { width: 1fr; height: auto; padding: 0 1; background: $panel; text-style: bold; }
    MethodPane.-winner .pane-title { background: $success 40%; }
    MethodPane TokenStream { height: 1fr; }
    MethodPane AcceptanceChart { height: 13; min-height: 7; }
    MethodPane .pane-stats { height: auto; padding: 0 1; }
    """

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.run: MethodRun | None = None
        self.session_log = SessionLog()   # what the race has shown of the run so far
        self.fed = 0
        self.place: int | None = None
        self.status = "waiting"

    def compose(self) -> ComposeResult:
        yield Label(one_line(self.label), classes="pane-title", markup=False)
        yield TokenStream(classes="pane-transcript")
        yield AcceptanceChart(window=40, classes="pane-chart")
        yield Static(Text("waiting to be measured…", style="dim italic"), classes="pane-stats")

    @property
    def stats(self) -> RunningStats:
        """The numbers of what the race has shown (the summary ranks the same RunningStats over the whole run)."""
        return self.session_log.current

    @property
    def transcript(self) -> TokenStream:
        return self.query_one(TokenStream)

    @property
    def chart(self) -> AcceptanceChart:
        return self.query_one(AcceptanceChart)

    def set_run(self, run: MethodRun) -> None:
        self.run = run
        s = run.stats
        self.query_one(".pane-stats", Static).update(
            Text(f"measured: {s.tokens} tokens in {s.elapsed_s:.2f} s", style="dim italic"))

    @property
    def done(self) -> bool:
        return self.run is not None and self.fed >= len(self.run.events)

    def reset(self) -> None:
        self.transcript.clear()
        self.chart.clear()
        self.session_log = SessionLog()
        self.fed = 0
        self.place = None
        self.remove_class("-winner")
        self.query_one(".pane-title", Label).update(one_line(self.label))

    def show_until(self, due: int) -> bool:
        """Draws the run's events up to the `due`-th (what the race has reached); True if anything was drawn."""
        if self.run is None:
            return False
        events = self.run.events
        start = self.fed
        ts = self.transcript
        while self.fed < min(due, len(events)):
            ev = events[self.fed]
            self.fed += 1
            self.session_log.add(ev)
            if isinstance(ev, SessionHeader):
                ts.append(ev.user_text or ev.prompt, "prompt")
                ts.append("\n", "info")
            elif isinstance(ev, StepEvent):
                ts.push_step(ev, ev.step)
                self.chart.add_step(ev.accepted, ev.gamma, len(ev.drafted), ev.settings_changed)
        ts.flush()   # a race tick draws at once: the tick is the frame
        if self.fed != start:
            self.query_one(".pane-stats", Static).update(pane_stats(self.stats))
            return True
        return False

    def finish(self, place: int, total_s: float) -> None:
        """Its place in the race (0: the winner) and its recorded time, in its title."""
        self.place = place
        self.set_class(place == 0, "-winner")
        self.query_one(".pane-title", Label).update(
            f"{ordinal(place)} ✓ {one_line(self.label)} · {total_s:.2f} s")
