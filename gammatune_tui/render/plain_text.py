"""A chat's answers as plain text, for the clipboard: no colours, no markup, no end-of-turn token.

What the copy keys hand to the terminal's clipboard (`ChatExport`): the
last answer alone, or every turn of the transcript — the user's text, then
the answer. Only the emitted tokens count, never the decorations the
transcript draws (turn separators, ⏹, notes). A session that ended on the
model's end-of-turn token (stop reason `eos`) drops that token: the decoder
never emits past it, so it is the last one emitted, and its text
(`<|im_end|>`, `</s>`, `<eos>`…, or nothing where the tokenizer hides it) is
not part of the answer. Only a last token that reads as such a marker is
dropped: a source that ends for lack of text (the synthetic one) keeps its
last word. Control characters go through `printable()` as everywhere else, so
a pasted answer cannot carry an escape sequence.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..engine.events import SessionHeader, SessionSummary, StepEvent
from .safe_text import printable


END_OF_TURN = re.compile(r"\s*(<[^<>\s]+>|\[[A-Za-z_/|]+\])?\s*")
"""What an end-of-turn token's text looks like: a special-token tag (`</s>`, `<|im_end|>`, `[EOS]`) or nothing."""


def answer_text(steps: Sequence[StepEvent], summary: SessionSummary | None = None) -> str:
    """The text a session's steps emitted, without the end-of-turn token that ended it."""
    pieces = [t.text for ev in steps for t in ev.emitted]
    if summary is not None and summary.stop_reason == "eos" and pieces and END_OF_TURN.fullmatch(pieces[-1]):
        pieces.pop()
    return printable("".join(pieces))


def user_text(header: SessionHeader) -> str:
    """What the user typed for this turn (the prompt, for a recording made without a chat template)."""
    return header.user_text or ("".join(header.prompt_pieces) if header.prompt_pieces else header.prompt)


def turn_text(header: SessionHeader | None, steps: Sequence[StepEvent], summary: SessionSummary | None) -> str:
    """One turn: the user's text, then the answer (on a new line where a chat template came between them)."""
    answer = answer_text(steps, summary)
    if header is None:
        return answer
    user = user_text(header)
    joined = header.prompt.endswith(user) or "".join(header.prompt_pieces).endswith(user)
    return printable(user) + ("" if joined else "\n") + answer


def conversation_text(turns: Sequence[tuple[SessionHeader | None, Sequence[StepEvent], SessionSummary | None]]) -> str:
    """Every turn, a blank line between two, ending with a newline."""
    return "\n\n".join(turn_text(*t).rstrip("\n") for t in turns) + "\n" if turns else ""


def comparison_text(runs: Sequence[tuple[str, Sequence[StepEvent], SessionSummary | None]]) -> str:
    """Every method's answer of a comparison, each under a line naming it (labels are untrusted text too)."""
    return "\n\n".join(f"── {printable(label)} ──\n" + answer_text(steps, summary).rstrip("\n")
                       for label, steps, summary in runs) + "\n" if runs else ""
