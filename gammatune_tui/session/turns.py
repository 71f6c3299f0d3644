"""Loading a decoder and running one chat turn: the same code in the UI's thread and in the child process.

`LiveSource` runs the decoder either in the thread that iterates its events
or in a child process (`live_process.py`); both call these two functions, so
the two places cannot drift apart. A turn is where the conversation is cut
to the model's context (`context.py`) and held to the session's pace
(`pace.py`).
"""

from __future__ import annotations

from typing import Any, Callable, Generator, Iterator, TypeVar

from ..engine.common.pair import ModelPair
from ..engine.decoder import SpeculativeDecoder
from ..engine.loading.load_stages import load_stages_text
from ..engine.events.precision_text import model_note
from ..engine.loading.models import load_pair
from ..engine.loading.siblings import decoding_pair
from ..engine.policies import PolicySettings
from ..engine.common.sampling import SamplingConfig
from ..engine.context import context_window
from ..engine.runners import runner_pool
from .context import fit_conversation
from .pace import Idle, StepPacer, paced
from .plain_speed import PlainSpeed, measure_plain, refresh_plain
from ..errors import GammatuneError
from .source import Notice, Progress, SourceItem
from .system_prompt import fit_system, prompt_format

R = TypeVar("R")

Messages = list[dict[str, str]]


def load_decoder(load_kwargs: dict[str, Any], settings: PolicySettings, sampling: SamplingConfig,
                 progress: Progress, pair: ModelPair | None = None) -> tuple[ModelPair, SpeculativeDecoder]:
    """(pair, decoder): the pair loaded with `load_pair(**load_kwargs)` unless given, and a decoder on it."""
    if pair is None:
        pair = load_pair(**load_kwargs, progress=progress)
    else:
        progress("ready", 1.0)
    return pair, SpeculativeDecoder(pair, settings, sampling)


def plain_at_load(pair: ModelPair, sampling: SamplingConfig, progress: Progress) -> PlainSpeed | None:
    """Plain target decoding timed once the pair is loaded and warm: what the chat's speed is set against."""
    progress("timing plain target decoding", 1.0)
    plain = measure_plain(pair, sampling, "at load")
    progress("ready", 1.0)
    return plain


def plain_after_turn(pair: ModelPair, decoder: SpeculativeDecoder, current: PlainSpeed | None, turn: int) -> PlainSpeed | None:
    """After a turn (the user is reading, nothing runs): timed again if the sampling in force changed."""
    return refresh_plain(pair, decoder.sampling, current, f"after turn {turn + 1}")


def switch_drafter(pair: ModelPair, name: str, settings: PolicySettings,
                   sampling: SamplingConfig) -> Generator[Notice, None, SpeculativeDecoder | None]:
    """Notices saying what happens while a decoder drafting with `name` is built; returns that decoder.

    Between two turns of a chat: a self-draft is built from the target the
    first time it is asked for (a second or two, said before it starts); a
    draft model the pair does not have is one notice, and the return is None
    (the caller keeps its old decoder). A generator, not a list, so the
    "building" notice reaches the user before the build: `new = yield from
    switch_drafter(...)` where the caller streams, `drain` where it sends.
    """
    from ..engine.drafting.draft_sources import DrafterSettings

    try:
        d = DrafterSettings.of(name)
    except GammatuneError as exc:
        yield Notice(str(exc), severity="error")
        return None
    if d.self_draft:
        yield Notice(f"building {d.name}: the target's own weights quantized in memory, for the next answer",
                     severity="information")
    try:
        on, source = decoding_pair(pair, d)   # a self-draft: the sibling pair whose draft it is, built once
        decoder = SpeculativeDecoder(on, settings, sampling, drafter=source)
    except GammatuneError as exc:
        yield Notice(f"cannot draft with {d.name}: {exc}", severity="error")
        return None
    yield Notice(f"drafting with {d.name} from this answer on", severity="information")
    return decoder


def drain(notices: Generator[Notice, None, R], send: Callable[[Notice], object]) -> R:
    """Each notice of `notices` to `send`, then the generator's return value (`switch_drafter`'s decoder)."""
    while True:
        try:
            send(next(notices))
        except StopIteration as done:
            return done.value


def run_turn(pair: ModelPair, decoder: SpeculativeDecoder, messages: Messages, raw: bool, max_new_tokens: int, user_text: str,
             turn: int, pacer: StepPacer | None = None, idle: Idle | None = None,
             note_system: bool = True) -> Iterator[SourceItem]:
    """One turn of the conversation `messages` (ending with the user's), as the decoder's events.

    A system message the pair cannot read is left out, and a Notice says so
    when `note_system` (the first turn it is left out of: `system_prompt.py`).
    The most recent turns that fit the models' context go (a Notice first
    says what was left out); `pacer` holds the steps to its rate, its waits
    taken out of the events' clocks.
    """
    messages, system_note = fit_system(pair, messages, raw)
    if system_note and note_system:
        yield Notice(system_note[:1].upper() + system_note[1:] + ".", title="System prompt")
    window = context_window(pair)
    fit = fit_conversation(messages, lambda m: pair.encode_prompt(m, raw=raw), max_new_tokens,
                           window.tokens if window is not None else None, prompt_format(pair, raw))
    if fit.notice:
        yield Notice(fit.notice)
    events = decoder.generate(fit.ids, fit.max_new_tokens, user_text=user_text, turn=turn)
    yield from paced(events, pacer, idle)


def _precisions(pair: ModelPair) -> str:
    """' (float32, 538 MB + int4 g32, +84 MB in memory)': each model's precision and size, where the pair can say them."""
    info = pair.models()
    t = info["target"]
    parts = [model_note(t["precision"], t["bytes"])]
    d = info.get("draft")
    if d is not None:
        parts.append(model_note(d["precision"], d["bytes"], added=pair.self_draft is not None))
    # "in memory": `gammatune models` lists the files' sizes on disk, which differ (a GGUF, a converted copy)
    sizes = " in memory" if any(", " in p for p in parts) else ""
    return f" ({' + '.join(p for p in parts if p)}{sizes})" if any(parts) else ""


def pair_title(pair: ModelPair) -> str:
    """The app's subtitle once loaded: which pair (or target + a source needing no model), which runner, and where the
    load's time went, stage by stage (so a slow start, or the first turn's speed, is not a surprise)."""
    if pair.draft is None:  # loaded for a source that needs no draft model (its name is the pair's name_draft)
        name = f"{'demo target' if pair.is_demo else pair.name_target} + {pair.name_draft.replace('-', ' ')}"
    else:
        name = "demo pair" if pair.is_demo else f"{pair.name_target} + {pair.name_draft}"
    name += _precisions(pair)
    runner = runner_pool(pair).label
    if pair.load_s:
        return f"{name} · {runner} runner · {load_stages_text(pair.load_s)}"
    warmup = float(pair.warmup_s or 0.0)
    return f"{name} · {runner} runner" + (f" · warmed up in {warmup:.1f} s" if warmup > 0 else "")
