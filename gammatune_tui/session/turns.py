"""Loading a decoder and running one chat turn: the same code in the UI's thread and in the child process.

`LiveSource` runs the decoder either in the thread that iterates its events
or in a child process (`live_process.py`); both call these two functions, so
the two places cannot drift apart. A turn is where the conversation is cut
to the model's context (`context.py`) and held to the session's pace
(`pace.py`).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..engine.pair import Pair
from ..engine.decoder import SpeculativeDecoder
from ..engine.load_stages import load_stages_text
from ..engine.models import load_pair
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..engine.context import context_window
from .context import fit_conversation
from .pace import Idle, StepPacer, paced
from .source import Notice, Progress, SourceItem

Messages = list[dict[str, str]]


def load_decoder(load_kwargs: dict[str, Any], settings: PolicySettings, sampling: SamplingConfig,
                 progress: Progress, pair: Pair | None = None) -> tuple[Any, Any]:
    """(pair, decoder): the pair loaded with `load_pair(**load_kwargs)` unless given, and a decoder on it."""
    if pair is None:
        pair = load_pair(**load_kwargs, progress=progress)
    else:
        progress("ready", 1.0)
    return pair, SpeculativeDecoder(pair, settings, sampling)


def run_turn(pair: Pair, decoder: Any, messages: Messages, raw: bool, max_new_tokens: int, user_text: str,
             turn: int, pacer: StepPacer | None = None, idle: Idle | None = None) -> Iterator[SourceItem]:
    """One turn of the conversation `messages` (ending with the user's), as the decoder's events.

    The most recent turns that fit the models' context go (a Notice first
    says what was left out); `pacer` holds the steps to its rate, its waits
    taken out of the events' clocks.
    """
    window = context_window(pair)
    fit = fit_conversation(messages, lambda m: pair.encode_prompt(m, raw=raw), max_new_tokens,
                           window.tokens if window is not None else None)
    if fit.notice:
        yield Notice(fit.notice)
    events = decoder.generate(fit.ids, fit.max_new_tokens, user_text=user_text, turn=turn)
    yield from paced(events, pacer, idle)


def pair_title(pair: Pair) -> str:
    """The app's subtitle once loaded: which pair (or target + prompt lookup), which runner, and where the
    load's time went, stage by stage (so a slow start, or the first turn's speed, is not a surprise)."""
    if pair.draft is None:  # loaded for prompt lookup: the target alone drafts from the text
        name = f"{'demo target' if getattr(pair, 'is_demo', False) else getattr(pair, 'name_target', 'target')}" \
               " + prompt lookup"
    else:
        name = "demo pair" if getattr(pair, "is_demo", False) else \
            f"{getattr(pair, 'name_target', 'target')} + {getattr(pair, 'name_draft', 'draft')}"
    try:
        runner = str(pair.runner)
    except Exception:   # pair-likes without a runner pool (tests' stand-ins)
        return name
    stages = getattr(pair, "load_s", None)
    if isinstance(stages, dict) and stages:
        return f"{name} · {runner} runner · {load_stages_text(stages)}"
    warmup = float(getattr(pair, "warmup_s", 0.0) or 0.0)
    return f"{name} · {runner} runner" + (f" · warmed up in {warmup:.1f} s" if warmup > 0 else "")
