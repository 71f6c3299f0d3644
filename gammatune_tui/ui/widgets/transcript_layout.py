"""The transcript's text wrapped into visual lines: what `TokenStream` draws, without any drawing.

Kept apart from the widget so wrapping can be read (and tested) as plain list
work: tokens are placed on the last line, wrapped at token boundaries when a
short token does not fit, split by characters when a long one does not, and
each step remembers the lines it spans (so the inspector can scroll to it and
a click can find it). A word wrapped to the next line leaves the spaces
before it at the end of the line above (invisible there), so no wrapped line
starts with a stray space; the logical tokens keep their text unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

from ...engine.events import StepEvent


@dataclass(frozen=True)
class Piece:
    """A run of text from one token (its role: prompt, draft, target or info; its step; the draft's confidence)."""

    text: str
    role: str
    step: int = -1
    confidence: float | None = None


def step_pieces(ev: StepEvent, step: int) -> list[Piece]:
    """The pieces of one StepEvent, tagged with `step`: accepted draft tokens carry the draft's probability."""
    pieces = []
    for i, tok in enumerate(ev.emitted):
        if tok.source == "draft":
            conf = ev.drafted[i].chosen_prob if i < len(ev.drafted) else None
            pieces.append(Piece(tok.text, "draft", step, conf))
        else:
            pieces.append(Piece(tok.text, "target", step))
    return pieces


class TranscriptLayout:
    """Logical tokens and the visual lines they wrap into at `width` columns."""

    def __init__(self, width: int = 80) -> None:
        self.width = width
        self.tokens: list[Piece] = []            # logical tokens, for re-wrapping and export
        self.lines: list[list[Piece]] = [[]]     # visual lines
        self.widths: list[int] = [0]
        self.step_lines: dict[int, tuple[int, int]] = {}
        self.max_step = -1

    def add(self, piece: Piece) -> None:
        self.tokens.append(piece)
        self._place(piece)

    def clear(self) -> None:
        self.tokens.clear()
        self._reset_lines()
        self.max_step = -1

    def truncate(self, n_tokens: int) -> None:
        """Keep only the first `n_tokens` tokens; re-wraps everything."""
        del self.tokens[max(0, n_tokens):]
        self.max_step = max((p.step for p in self.tokens), default=-1)
        self.rewrap(self.width)

    def rewrap(self, width: int) -> None:
        self.width = width
        self._reset_lines()
        for p in self.tokens:
            self._place(p)

    def step_at(self, x: int, y: int) -> int | None:
        """The step of the token drawn at (x, y), if any."""
        if not (0 <= y < len(self.lines)):
            return None
        col = 0
        for p in self.lines[y]:
            w = cell_len(p.text)
            if col <= x < col + w:
                return p.step if p.step >= 0 else None
            col += w
        return None

    def _reset_lines(self) -> None:
        self.lines = [[]]
        self.widths = [0]
        self.step_lines.clear()

    def _place(self, p: Piece) -> None:
        start = len(self.lines) - 1
        for i, part in enumerate(p.text.split("\n")):
            if i > 0:
                self.lines.append([])
                self.widths.append(0)
            if part:
                self._place_run(Piece(part, p.role, p.step, p.confidence))
        if p.step >= 0:
            last = len(self.lines) - 1
            lo, _ = self.step_lines.get(p.step, (start, last))
            self.step_lines[p.step] = (min(lo, start), last)
            if p.step > self.max_step:
                self.max_step = p.step

    def _place_run(self, p: Piece) -> None:
        width = self.width
        w = cell_len(p.text)
        cur = self.widths[-1]
        if cur + w <= width:
            self.lines[-1].append(p)
            self.widths[-1] = cur + w
            return
        if w <= width // 3 and cur > 0:
            # short token: move it to the next line (wraps at token boundaries); its leading spaces stay at the
            # end of this line, where they show as nothing, so a wrapped line does not start with a stray space
            word = p.text.lstrip(" ")
            lead = min(len(p.text) - len(word), width - cur)
            if lead:
                self.lines[-1].append(Piece(p.text[:lead], p.role, p.step, p.confidence))
                self.widths[-1] = cur + lead
            if word:
                self.lines.append([Piece(word, p.role, p.step, p.confidence)])
                self.widths.append(cell_len(word))
            return
        # long run: split by characters
        buf: list[str] = []
        bw = cur
        for ch in p.text:
            cw = cell_len(ch)
            if bw + cw > width and (buf or bw > 0):
                if buf:
                    self.lines[-1].append(Piece("".join(buf), p.role, p.step, p.confidence))
                self.widths[-1] = bw
                self.lines.append([])
                self.widths.append(0)
                buf, bw = [], 0
            buf.append(ch)
            bw += cw
        if buf:
            self.lines[-1].append(Piece("".join(buf), p.role, p.step, p.confidence))
        self.widths[-1] = bw
