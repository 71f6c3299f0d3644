"""The chat screen's keys that arrange it and act on it whole: panels, Tab, views, HTML export, copy, the palette.

A layer of the chat screen over `ChatViews` (chat_views.py) and `ChatBase`
(chat_base.py), which declare what it uses.

F8 is how every panel stays reachable on a laptop's 80 columns: below
`NARROW_BELOW` the screen shows the transcript or the panels, and F8
switches; wider, both are shown and F8 moves the focus to the controls and
back. Tab goes prompt → method → parameters → transcript on every width
(`tab_chain`), showing the panels on the way when they take turns. The
footer (widgets/chat_footer.py) shows every key it has room for; all of them
are in F1's list and the command palette. Ctrl+Y / Ctrl+T copy the last
answer / the whole transcript as plain text (`render.plain_text`) through
Textual's clipboard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from rich.text import Text
from textual.app import SystemCommand
from textual.widget import Widget

from ...engine.common.names import BY_SOURCE, CHAT_DRAFTERS, is_self_draft
from ...engine.policies import grouped_methods
from ...render.change_marks import change_list
from ...render.plain_text import answer_text, conversation_text
from ...render.session_info import settings_line
from ...render.safe_text import one_line
from ...session.pace import PACES, pace_label
from ...session.source import DrafterSource
from ..widgets.stats_panel import render_stats
from .chat_views import ChatViews
from .clipboard import copy_with_notice
from .help import colour_key


def drafter_help(name: str) -> str:
    """The palette's words for a "Drafter:" entry: what drafts, and for a self-draft only, that it is built first."""
    if is_self_draft(name):
        return (f"Draft with the target's own weights quantized to {name.split(':', 1)[1]} from the next answer on "
                "(a self-draft is built from the target first)")
    spec = BY_SOURCE.get(name)
    if spec is None or spec.loads_draft:
        return "Draft with the pair's draft model from the next answer on"
    return f"Draft with no draft model from the next answer on: {spec.help}"   # the row's own words


class ChatActions(ChatViews):
    """F3 export, copy keys, F4 shading, F5 chart history, F7 inspector, F8 panels, Tab; the palette's chat entries."""

    # -- narrow screens: one of transcript / panels ---------------------------------------
    def action_toggle_panels(self) -> None:
        side = self.query_one("#side")
        in_side = self.app.focused is not None and side in self.app.focused.ancestors
        if self.has_class("-narrow"):
            self.set_class(not self.has_class("-panels"), "-panels")
            if self.has_class("-panels"):
                self.focus_controls()
            else:
                self._focus_main()
        elif in_side:
            self._focus_main()
        else:
            self.focus_controls()

    def focus_controls(self) -> None:
        """Show the panels if need be and put the cursor on the method."""
        if self.has_class("-narrow"):
            self.add_class("-panels")
        # after the refresh that shows the panels, so the focus can scroll the method into view
        self.call_after_refresh(self.query_one("#ctl-method").focus)

    # -- Tab: prompt → method → parameters → transcript, on any width -------------------------
    def tab_chain(self) -> list:
        """The widgets Tab visits, in order: the prompt, the controls (method first), then the rest.

        Below `NARROW_BELOW` the controls and the prompt take turns on screen:
        the hidden side stands in by its first stop (the method, or the prompt),
        and Tab shows it on the way (`_tab`).
        """
        chain = list(self.focus_chain)
        side = self.query_one("#side")
        prompt = self.query_one("#prompt")
        in_side = [w for w in chain if side in w.ancestors]
        rest = [w for w in chain if w is not prompt and side not in w.ancestors]
        has_prompt = not self.read_only and bool(prompt.display)
        if self.has_class("-narrow") and not self.read_only:
            if not self.has_class("-panels"):
                in_side = [self.query_one("#ctl-method")]
            else:
                rest = [self.transcript]
        return ([prompt] if has_prompt else []) + in_side + rest

    def _tab(self, direction: int) -> Widget | None:
        chain = self.tab_chain()
        if not chain:
            return None
        cur = self.app.focused
        i = chain.index(cur) if cur in chain else (-1 if direction > 0 else 0)
        target = chain[(i + direction) % len(chain)]
        to_side = self.query_one("#side") in target.ancestors
        if self.has_class("-narrow") and to_side != self.has_class("-panels"):
            self.set_class(to_side, "-panels")
        # focused now, not after a refresh (`focus()` waits for one): keys typed right after Tab, before the
        # app caught up (0.4 s at 80×24 on a loaded machine), went to the field left behind
        self.set_focus(target, scroll_visible=False)
        self.call_after_refresh(self._show_focused, target)   # once it is displayed and laid out
        return target

    def _show_focused(self, widget: Widget) -> None:
        if self.focused is widget:
            widget.scroll_visible(animate=False)

    def focus_next(self, selector: str | type[Widget] = "*") -> Widget | None:
        return self._tab(1) if selector == "*" else super().focus_next(selector)

    def focus_previous(self, selector: str | type[Widget] = "*") -> Widget | None:
        return self._tab(-1) if selector == "*" else super().focus_previous(selector)

    def _focus_main(self) -> None:
        prompt = self.query_one("#prompt")
        (self.transcript if self.read_only or not prompt.display else prompt).focus()

    # -- views --------------------------------------------------------------------------
    def action_toggle_shade(self) -> None:
        ts = self.transcript
        ts.shade = not ts.shade
        self.notify("Draft tokens shaded by the draft's confidence" if ts.shade else "Confidence shading off",
                    timeout=2)

    def action_toggle_history(self) -> None:
        self.chart.full_history = not self.chart.full_history

    def action_toggle_inspector(self) -> None:
        """Tall screens: shown / hidden. Short ones: step line → whole table → hidden → step line."""
        self.inspector.toggle_shown(short=self.has_class("-short"))

    # -- export -------------------------------------------------------------------------
    def export_parts(self) -> tuple[list, list]:
        """What the HTML export prints before the transcript (title, legend) and after it (each session's settings and stats)."""
        roles = self.host.gamma_theme.roles
        title = Text(f"gammatune · {one_line(self.source.title)}", style="bold")
        legend = colour_key(Text("Colours: "), roles, "prompt", "draft tokens the target accepted",
                            "tokens from the target (corrections and bonus)")
        after: list = []
        for k, (stats, (_h, steps, _s)) in enumerate(zip(self.sessions, self.session_turns())):
            h = stats.header
            name = (one_line(h.label) if h.label else f"turn {h.turn + 1}") if h is not None else f"session {k + 1}"
            after += [Text(""), Text(f"{name}: statistics", style="bold")]
            if h is not None:
                after.append(Text(f"settings: {settings_line(h)}", style="dim"))
            changes = change_list(steps, h)
            if changes:   # where the user changed the method or a parameter mid-answer (marked ⟦…⟧ above)
                after.append(Text("changed at " + " · ".join(changes), style="dim"))
            after.append(render_stats(stats))
        return [title, legend, Text("")], after

    def action_export_html(self) -> Path | None:
        try:
            path = self.host.export_path(".html")
            before, after = self.export_parts()
            path.write_text(self.transcript.export_html(before=before, after=after), encoding="utf-8")
        except OSError as exc:
            self.notify(f"Could not write the export in {self.host.export_dir}: {exc.strerror or exc}",
                        severity="error")
            return None
        self.notify(f"Transcript saved to {path}", title="Export", timeout=8)
        return path

    # -- copy (Textual's clipboard: OSC 52, which most terminals pass to the system clipboard) -------
    def session_turns(self) -> list[tuple]:
        """(header, steps, summary) of every session shown, in order."""
        return self.session_log.turns()

    def action_copy_answer(self) -> str:
        turns = self.session_turns()
        if not turns:
            self.notify("Nothing to copy yet: no answer has started.", severity="warning", timeout=3)
            return ""
        text = answer_text(turns[-1][1], turns[-1][2])
        return self._copy(text, "the last answer")

    def action_copy_transcript(self) -> str:
        turns = self.session_turns()
        if not turns:
            self.notify("Nothing to copy yet: the transcript is empty.", severity="warning", timeout=3)
            return ""
        return self._copy(conversation_text(turns), f"the whole transcript ({len(turns)} turn{'s' * (len(turns) != 1)})")

    def _copy(self, text: str, what: str) -> str:
        return copy_with_notice(self, text, what)

    # -- the command palette ---------------------------------------------------------------
    def system_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette (the app adds help, themes and quit)."""
        yield SystemCommand("Stop generation", "End the running generation at the next step (Esc)", self.action_stop)
        yield SystemCommand("Export transcript to HTML", "Transcript, legend, settings and statistics as .html (F3)",
                            self.action_export_html)
        yield SystemCommand("Copy last answer", "The last answer as plain text to the clipboard (Ctrl+Y)",
                            self.action_copy_answer)
        yield SystemCommand("Copy whole transcript", "Every turn as plain text to the clipboard (Ctrl+T)",
                            self.action_copy_transcript)
        yield SystemCommand("Show load times", "Where loading the models spent its time, stage by stage",
                            self.action_show_load_times)
        yield SystemCommand("Toggle confidence shading", "Shade draft tokens by the draft's confidence (F4)",
                            self.action_toggle_shade)
        yield SystemCommand("Toggle chart history", "Last steps or the whole session in the chart (F5)",
                            self.action_toggle_history)
        yield SystemCommand("Toggle step inspector", "Show or hide the step inspector (F7)",
                            self.action_toggle_inspector)
        yield SystemCommand("Switch transcript / panels", "Chart, statistics and controls on a narrow screen (F8)",
                            self.action_toggle_panels)
        yield SystemCommand("Inspect latest step", "Let the inspector follow the newest step again",
                            lambda: self.select_step(None))
        yield SystemCommand("Focus prompt", "Move the cursor to the prompt box", self._focus_main)
        yield SystemCommand("Focus controls", "Move the cursor to the policy controls (F8)", self.focus_controls)
        if not self.read_only and isinstance(self.source, DrafterSource):
            for name in CHAT_DRAFTERS:
                yield SystemCommand(f"Drafter: {name}", drafter_help(name), lambda name=name: self.set_drafter(name))
        if self.can_pace:
            for pace in PACES:
                yield SystemCommand(f"Pace: {pace_label(pace)}",
                                    "Hold the generation to this many steps a second (F9)" if pace else
                                    "Let the generation run as fast as it can (F9)",
                                    lambda pace=pace: self.set_pace(pace))
        if not self.read_only:
            for words, names in grouped_methods():
                for m in names:
                    yield SystemCommand(f"Method: {m}", f"Switch the γ policy to {m} ({words}) from the next step",
                                        lambda m=m: self.set_method(m))
