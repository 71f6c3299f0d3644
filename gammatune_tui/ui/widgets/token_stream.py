"""The transcript: tokens coloured by who produced them (docs/spec.md §4, the paper's Fig. 2b).

Built on Textual's line API so appending a step costs the tokens of that step,
not the whole conversation: `self.wrapped` (a `TranscriptLayout`) keeps the
wrapped visual lines and adds to the last one, and the widget redraws only
the lines that changed. It follows the end of the text only while the user
is already at the bottom.

Lines are wrapped to the width inside the vertical scrollbar's gutter, which
is kept even while no scrollbar is needed: the wrap width cannot change when
one appears (which used to cut the ends of wrapped lines in the compare and
replay panes), and there is never a horizontal scrollbar.

Token text is untrusted: every piece enters through one method, which makes
it printable (`render.safe_text`). Steps pushed while a session streams are
batched and drawn at about 12 frames a second, so a fast session draws fewer
frames, not fewer tokens; anything that reads or changes the transcript
draws the queued steps first.

Roles: ``prompt`` (the user's text, blue in the paper theme), ``draft`` (draft
tokens the target accepted, green), ``target`` (corrections and bonus tokens,
red) and ``info`` (separators and notes, dim). Each token may carry a global
step index, so a click on it selects that step; draft tokens may carry the
draft's confidence, used when confidence shading is on.

Usage::

    ts = TokenStream()
    ts.set_palette(roles, background="#15181d", foreground="#e3e6eb")
    ts.append("def ", "prompt")
    ts.append("foo", "draft", step=0, confidence=0.93)
    ts.push_step(step_event, 1)     # drawn with the next frame
"""

from __future__ import annotations

import re
from typing import Sequence

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.color import Color
from textual.events import Click, Resize
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...engine.events import StepEvent
from ...render.html_export import html_page
from ...render.safe_text import printable
from ..themes import FALLBACK, TokenRole
from .transcript_layout import Piece, TranscriptLayout, step_pieces

ROLES = ("prompt", "draft", "target", "info")

_WORDS = re.compile(r"\s*\S+|\s+")
"""A note's words, each with the spaces before it: a note wraps between words, as tokens do."""

FRAME_INTERVAL = 0.08
"""Seconds between draws of pushed steps while tokens stream in (about 12 frames/s)."""


class TokenStream(ScrollView, can_focus=True):
    """Coloured, incrementally appended, clickable transcript."""

    DEFAULT_CSS = """
    TokenStream {
        height: 1fr;
        background: $surface;
        padding: 0 1;
        /* lines are wrapped to the width: never a horizontal scrollbar, and the vertical
           one's room is kept from the start, so its appearing cannot cut wrapped lines */
        overflow-x: hidden;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
    }
    TokenStream:focus { background-tint: $foreground 3%; }
    """

    BINDINGS = [
        Binding("left", "select_step(-1)", "Prev step", show=False),
        Binding("right", "select_step(1)", "Next step", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
    ]

    shade = reactive(False)
    """Shade each accepted draft token by the draft's confidence (brighter = surer)."""

    selected_step: reactive[int | None] = reactive(None)

    class StepSelected(Message):
        """The user picked a step (click on a token, or arrows)."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.wrapped = TranscriptLayout()
        self._queued: list[Piece] = []
        self._frame_scheduled = False
        self._wrap = 0
        self._cache: dict[int, Strip] = {}
        self._roles: dict[str, TokenRole] = dict(FALLBACK.roles)
        self._bg = FALLBACK.background
        self._fg = FALLBACK.foreground
        self._styles: dict[str, Style] = {}
        self._following = True       # at the bottom: new text scrolls into view
        self._end_scheduled = False
        self._session_start = 0      # tokens before the running session (`begin_session`)
        self._rebuild_styles()

    # -- public API ------------------------------------------------------------
    @property
    def token_count(self) -> int:
        self.flush()
        return len(self.wrapped.tokens)

    @property
    def line_count(self) -> int:
        self.flush()
        return len(self.wrapped.lines)

    @property
    def steps(self) -> int:
        """Number of distinct steps shown (highest step index + 1)."""
        self.flush()
        return self.wrapped.max_step + 1

    def set_palette(self, roles: dict[str, TokenRole], background: str, foreground: str) -> None:
        self._roles = dict(roles)
        self._bg, self._fg = background, foreground
        self._rebuild_styles()
        self._cache.clear()
        self.refresh()

    def push_step(self, ev: StepEvent, step: int) -> None:
        """Queue one step's tokens (tagged with global step `step`); drawn with the next frame."""
        self._queued.extend(p for p in step_pieces(ev, step) if p.text)
        if not self.is_mounted:
            self.flush()
        elif not self._frame_scheduled:
            self._frame_scheduled = True
            self.set_timer(FRAME_INTERVAL, self.flush)

    def flush(self) -> None:
        """Draw the queued steps now."""
        self._frame_scheduled = False
        if self._queued:
            queued, self._queued = self._queued, []
            self._add(queued)

    def append(self, text: str, role: str, step: int = -1, confidence: float | None = None) -> None:
        """Add one token."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        self.flush()
        self._add([Piece(text, role, step, confidence)])

    def add_line(self, text: str = "", role: str = "info") -> None:
        """Start a new line (if the current one is not empty) holding `text`, wrapped between words."""
        self.flush()
        pieces = [Piece("\n", "info")] if self.wrapped.widths[-1] > 0 else []
        pieces += [Piece(word, role) for word in _WORDS.findall(text)] + [Piece("\n", "info")]
        self._add(pieces)

    def clear(self) -> None:
        self._queued.clear()
        self._session_start = 0
        self.wrapped.clear()
        self._cache.clear()
        self.selected_step = None
        self.virtual_size = Size(self._wrap_width(), 1)
        self.scroll_to(0, 0, animate=False)
        self._following = True
        self.refresh()

    def begin_session(self) -> None:
        """The running session starts here (before its heading): what `rewind_session` goes back to."""
        self._session_start = self.token_count

    def rewind_session(self) -> None:
        """Take the running session back out, heading and all (a replay redraws it from a prefix)."""
        self.truncate(self._session_start)

    def truncate(self, n_tokens: int) -> None:
        """Keep only the first `n_tokens` tokens (e.g. a replay stepping back); re-wraps everything."""
        self.flush()
        if n_tokens >= len(self.wrapped.tokens):
            return
        at_bottom = self._following
        self._wrap = self._wrap_width()
        self.wrapped.truncate(n_tokens)
        self._relayout()
        if self.selected_step is not None and self.selected_step > self.wrapped.max_step:
            self.selected_step = None
        if at_bottom:
            self.call_after_refresh(self._follow_end)
        self.refresh()

    def plain_text(self) -> str:
        self.flush()
        return "".join(p.text for p in self.wrapped.tokens)

    def to_text(self) -> Text:
        """The whole transcript as a Rich Text with its colours (for export)."""
        self.flush()
        out = Text()
        for p in self.wrapped.tokens:
            out.append(p.text, self._style_for(p, selected=False))
        return out

    def export_html(self, title: str = "gammatune transcript", before: Sequence[RenderableType] = (),
                    after: Sequence[RenderableType] = ()) -> str:
        """Standalone HTML with the token colours (`before`/`after`: more to print around it); all text escaped."""
        return html_page([*before, self.to_text(), *after], width=self._wrap_width(), background=self._bg,
                         foreground=self._fg, title=title)

    def step_at(self, x: int, y: int) -> int | None:
        """The step of the token drawn at content coordinates (x, y), if any."""
        self.flush()
        return self.wrapped.step_at(x, y)

    # -- layout ----------------------------------------------------------------
    def _add(self, pieces: list[Piece]) -> None:
        """The one entrance of text: made printable here, empty pieces dropped, placed, redrawn."""
        first = len(self.wrapped.lines) - 1
        self.wrapped.width = self._wrap or self._wrap_width()
        for p in pieces:
            text = printable(p.text)
            if text:
                self.wrapped.add(Piece(text, p.role, p.step, p.confidence))
        self._after_change(first, self._following)

    def _wrap_width(self) -> int:
        w = self.scrollable_content_region.width if self.is_mounted else 0
        return max(10, w or self._wrap or 80)

    def _relayout(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self._wrap, len(self.wrapped.lines))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # the user scrolling up stops the follow; scrolling back to the end resumes it
        self._following = new_value >= self.max_scroll_y - 1

    def _set_virtual_size(self, size: Size) -> None:
        """Grow the scrollable area without a layout pass of the whole screen.

        Assigning `virtual_size` re-lays out every widget on the screen (it is a
        layout reactive); a transcript that grows by a line per step would pay that
        each step. The size is set quietly and only the scrollbars are updated
        (they still trigger a layout themselves when they appear or disappear).
        """
        if size == self.virtual_size:
            return
        if not self.is_mounted or not self.container_size:
            self.virtual_size = size
            return
        try:
            self.set_reactive(TokenStream.virtual_size, size)
            self._scroll_update(size)
        except AttributeError:  # pragma: no cover - a Textual without these internals
            self.virtual_size = size

    def _after_change(self, first_changed: int, at_bottom: bool) -> None:
        n = len(self.wrapped.lines)
        for y in range(first_changed, n):
            self._cache.pop(y, None)
        self._set_virtual_size(Size(self._wrap or self._wrap_width(), n))
        if at_bottom and not self._end_scheduled:
            # after the next layout, when the scrollbar and max_scroll_y know the new size
            self._end_scheduled = True
            self.call_after_refresh(self._follow_end)
        self.refresh_lines(max(0, first_changed - self.scroll_offset.y), n - first_changed)

    def _follow_end(self) -> None:
        self._end_scheduled = False
        if self._following and not self.is_vertical_scrollbar_grabbed:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def on_resize(self, event: Resize) -> None:
        """A new width re-wraps; any new size (F7's inspector, F8's panels, the prompt box) keeps the end in
        view while the user was at the end: a shorter transcript keeps its scroll offset, so without this
        the last lines (a short answer) sat below the fold."""
        at_bottom = self._following
        if self._wrap_width() != self._wrap:
            self._wrap = self._wrap_width()
            self.wrapped.rewrap(self._wrap)
            self._relayout()
            self.refresh()
        if at_bottom and event.size.height > 0:   # hidden (F8 at 80 columns): followed when shown again
            self._following = True
            self.call_after_refresh(self._follow_end)

    def on_mount(self) -> None:
        self._wrap = self._wrap_width()

    # -- drawing ---------------------------------------------------------------
    def _rebuild_styles(self) -> None:
        self._styles = {r: role.style() for r, role in self._roles.items()}
        self._styles["info"] = Style(color=Color.parse(self._fg).blend(Color.parse(self._bg), 0.45).hex, italic=True)

    def _style_for(self, p: Piece, selected: bool) -> Style:
        style = self._styles.get(p.role) or Style()
        if self.shade and p.role == "draft" and p.confidence is not None:
            role = self._roles["draft"]
            conf = min(1.0, max(0.0, float(p.confidence)))
            colour = Color.parse(self._bg).blend(Color.parse(role.color), 0.25 + 0.75 * conf).hex
            style = role.style(colour)
        if selected:
            style = style + Style(reverse=True)
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line_no = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if line_no >= len(self.wrapped.lines):
            return Strip.blank(width, base)
        strip = self._cache.get(line_no)
        if strip is None:
            sel = self.selected_step
            segs = [Segment(p.text, base + self._style_for(p, sel is not None and p.step == sel))
                    for p in self.wrapped.lines[line_no]]
            strip = Strip(segs, self.wrapped.widths[line_no])
            self._cache[line_no] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()      # cached lines carry the widget's background

    def watch_shade(self) -> None:
        self._cache.clear()
        self.refresh()

    def toggle_shade(self) -> None:
        """F4: draft tokens shaded by the draft's confidence, or not; a notice says which."""
        self.shade = not self.shade
        self.notify("Draft tokens shaded by the draft's confidence" if self.shade else "Confidence shading off",
                    timeout=2)

    def watch_selected_step(self, old: int | None, new: int | None) -> None:
        for s in (old, new):
            if s is not None and s in self.wrapped.step_lines:
                lo, hi = self.wrapped.step_lines[s]
                for y in range(lo, hi + 1):
                    self._cache.pop(y, None)
        self.refresh()

    def scroll_to_step(self, step: int) -> None:
        self.flush()
        if step in self.wrapped.step_lines:
            lo, _ = self.wrapped.step_lines[step]
            height = self.scrollable_content_region.height
            if not (self.scroll_offset.y <= lo < self.scroll_offset.y + height):
                self.scroll_to(y=max(0, lo - height // 2), animate=False)

    # -- input -----------------------------------------------------------------
    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        step = self.step_at(offset.x + self.scroll_offset.x, offset.y + self.scroll_offset.y)
        if step is not None:
            self.post_message(self.StepSelected(step))

    def action_select_step(self, delta: int) -> None:
        top = self.steps - 1
        if top < 0:
            return
        cur = self.selected_step if self.selected_step is not None else top
        new = min(top, max(0, cur + delta))
        self.selected_step = new      # at once, so fast repeats count every press
        self.post_message(self.StepSelected(new))


__all__ = ["TokenStream", "Piece", "ROLES", "FRAME_INTERVAL"]
