"""Loading a decoder and running one chat turn: the same code in the UI's thread and in the child process.

`LiveSource` runs the decoder either in the thread that iterates its events
or in a child process (`live_process.py`); both call these two functions, so
the two places cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..engine.decoder import SpeculativeDecoder
from ..engine.events import Event
from ..engine.models import load_pair
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from .source import Progress

Messages = list[dict[str, str]]


def load_decoder(load_kwargs: dict[str, Any], settings: PolicySettings, sampling: SamplingConfig,
                 progress: Progress, pair: Any = None) -> tuple[Any, Any]:
    """(pair, decoder): the pair loaded with `load_pair(**load_kwargs)` unless given, and a decoder on it."""
    if pair is None:
        pair = load_pair(**load_kwargs, progress=progress)
    else:
        progress("ready", 1.0)
    return pair, SpeculativeDecoder(pair, settings, sampling)


def run_turn(pair: Any, decoder: Any, messages: Messages, raw: bool, max_new_tokens: int, user_text: str,
             turn: int) -> Iterator[Event]:
    """One turn of the conversation `messages` (ending with the user's), as the decoder's events."""
    ids = pair.encode_prompt(messages, raw=raw)
    yield from decoder.generate(ids, max_new_tokens, user_text=user_text, turn=turn)


def pair_title(pair: Any) -> str:
    if getattr(pair, "draft", True) is None:  # loaded for prompt lookup: the target alone drafts from the text
        return f"{'demo target' if getattr(pair, 'is_demo', False) else getattr(pair, 'name_target', 'target')}" \
               " + prompt lookup"
    return "demo pair" if getattr(pair, "is_demo", False) else \
        f"{getattr(pair, 'name_target', 'target')} + {getattr(pair, 'name_draft', 'draft')}"
