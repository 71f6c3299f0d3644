"""A chat that outgrows the model's context: keep the most recent turns that fit, and say so.

Every turn sends the whole conversation, so a long chat eventually needs more
positions than the models have (the demo pair: 1,024). Past that point a
model does not fail, it writes junk; so before each turn the conversation is
cut to the most recent turns that leave room for the reply, and a notice says
how many were left out. If even the newest message alone leaves no room,
the turn is refused with one line.

The limit is the pair's context window (`engine.context.context_window`: the
smaller of target and draft, read from their configs), the same number that
`run`, `compare` and `SpeculativeDecoder.generate` check against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import InvalidParameter

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class TurnFit:
    """What one turn sends: the prompt ids, its token budget, and what had to give way."""

    ids: list[int]
    max_new_tokens: int
    dropped_turns: int = 0
    notice: str = ""


def fit_conversation(messages: Sequence[dict[str, str]], encode: Callable[[Messages], Sequence[int]],
                     max_new_tokens: int, limit: int | None, wrapped_in: str = "the chat template") -> TurnFit:
    """The most recent turns of `messages` (ending with the user's) whose prompt leaves room for the reply.

    Earlier turns (a user message and its reply) are left out, oldest first,
    until prompt + `max_new_tokens` fits in `limit`; if the newest message
    alone does not leave that much, the reply gets what is left. Raises
    InvalidParameter when not even one new token fits; its line names the
    format the message was counted in (`wrapped_in`, "" for raw text).
    """
    msgs = list(messages)
    ids = list(encode(msgs))
    if limit is None or len(ids) + max_new_tokens <= limit:
        return TurnFit(ids, max_new_tokens)
    system = [m for m in msgs[:1] if m.get("role") == "system"]
    turns = msgs[len(system):]
    dropped = 0
    while len(ids) + max_new_tokens > limit and len(turns) > 1:
        turns = turns[2:] if len(turns) > 2 and turns[1].get("role") == "assistant" else turns[1:]
        dropped += 1
        ids = list(encode(system + turns))
    room = limit - len(ids)
    if room < 1:
        raise InvalidParameter(
            f"your message is {len(ids):,} tokens{f' with {wrapped_in}' if wrapped_in else ''}, and the model's context holds "
            f"{limit:,}: shorten it to leave room for a reply"
        )
    notes = []
    if dropped:
        notes.append(f"the conversation has outgrown the model's {limit:,}-token context: the "
                     f"{'oldest turn is' if dropped == 1 else f'{dropped} oldest turns are'} left out")
    budget = min(max_new_tokens, room)
    if budget < max_new_tokens:
        notes.append(f"only {budget:,} tokens of the {limit:,}-token context are left for the reply "
                     f"(asked for {max_new_tokens:,})")
    text = "; ".join(notes)
    return TurnFit(ids, budget, dropped, text[:1].upper() + text[1:] + "." if text else "")
