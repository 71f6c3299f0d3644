"""What the chat's transcript writes where a turn begins: the separator, the system prompt, notes, and who speaks.

A turn opens with its separator naming the method and the models it runs
with (`── turn 2 · gammatune+ γ0=4 · target + self:int8 ──`: the drafter
can change between turns), then the system prompt where it starts or
changes (`System: …`, `System prompt: none` once removed), the turn's notes
(`⚠ …`: old turns left out of the context, a system prompt the pair cannot
read), and the role labels: `You` over the user's text and `Assistant` over
the answer for a model with a chat template; a completion model (no
template, such as the demo pair) continues the user's own text, so its
answer has no label of its own and the user's reads `You · the model
continues your text`. Kept apart from `chat.py`, which handles events.
"""

from __future__ import annotations

from typing import Sequence

from ...engine.events import SessionHeader
from ...render.safe_text import one_line
from ..widgets.token_stream import TokenStream

CONTINUES = "You · the model continues your text"


def write_turn_heading(ts: TokenStream, h: SessionHeader, *, system: str, system_shown: str,
                       notes: Sequence[str]) -> str:
    """Write the heading of the turn `h` begins; returns the system prompt now shown (for the next turn)."""
    if ts.token_count:
        ts.add_line("")
    label = f" {h.label}" if h.label else ""
    models = f"{one_line(h.target)} + {one_line(h.draft)}"   # every turn: a drafter may have been switched
    ts.add_line(f"── turn {h.turn + 1}{label} · {h.method} γ0={h.gamma0} · {models} ──" if (h.turn or ts.token_count or h.label)
                else f"── {h.method} γ0={h.gamma0} · {models} ──", "info")
    if system != system_shown:   # the system prompt, where it starts or changes
        ts.add_line(f"System: {one_line(system)}" if system else "System prompt: none", "info")
    for note in notes:
        ts.add_line(f"⚠ {note}", "info")
    user = h.user_text or ("".join(h.prompt_pieces) if h.prompt_pieces else h.prompt)
    joined = h.prompt.endswith(user) or "".join(h.prompt_pieces).endswith(user)
    ts.add_line(CONTINUES if joined else "You", "info")
    ts.append(user, "prompt")
    if not joined:
        ts.add_line("Assistant", "info")
    return system
