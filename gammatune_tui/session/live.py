"""The live event source: real models, one decoder, a multi-turn conversation.

`prepare()` loads the pair (reporting stage and fraction) and builds the
`SpeculativeDecoder`; `events(prompt)` adds the prompt to the conversation,
runs one turn through the decoder with the whole history (the pair formats it
with its chat template) and adds the reply to the history when the turn ends.
`request()` and `stop()` reach the decoder, which acts at the next step
boundary; `set_pace()` caps the steps per second from the next step on
(`pace.py`: the waits never count in the timings). A conversation that has
outgrown the models' context loses its oldest turns, and a `Notice` before
the turn's header says so (`context.py`). The source holds the settings in
force (`settings`, `sampling`, `pace`): the UI reads them from here.

Where the decoder runs: given `load_kwargs`, in a child process by default
(`process=True`, `live_process.py`). Small models spend most of a step in
Python, so a decoder thread would share the interpreter lock with the UI's
drawing and lose a third of its speed; in its own process it runs as fast as
`gammatune run`. Given an already loaded `pair` (tests, notebooks), the
decoder runs in the calling thread. Both places load and run a turn with the
same two functions (`turns.py`); only the transport differs.

No Textual here: the UI runs `events()` in a worker thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ..engine.common.pair import ModelPair
from ..engine.events import Event, SessionSummary, StepEvent
from ..engine.policies import PolicySettings
from ..engine.common.sampling import SamplingConfig
from ..errors import GammatuneError
from .hindsight import Hindsight, HindsightHook, run_hook, sampled_session
from .live_process import DecoderProcess
from .pace import StepPacer, check_pace
from .source import Notice, Progress, SourceItem
from .system_prompt import RAW, system_unreadable, with_system
from .plain_speed import PlainSpeed
from .turns import (Messages, load_decoder, pair_title, plain_after_turn, plain_at_load, run_turn,
                    switch_drafter)

if TYPE_CHECKING:
    from ..engine.decoder import SpeculativeDecoder


class LiveSource:
    """EventSource over a model pair.

    Either pass `pair` (an already loaded ModelPair) or `load_kwargs` for
    `load_pair(**load_kwargs)`; `raw=True` sends the conversation as plain
    concatenated text instead of through the chat template. `hindsight`, if
    given, runs after each turn where the models are (session/hindsight.py);
    its answer is `self.hindsight` once the turn's events are exhausted.
    """

    read_only = False
    has_next_session = False   # a chat: each session starts from a prompt

    def __init__(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None, *,
                 pair: ModelPair | None = None, load_kwargs: dict[str, Any] | None = None, max_new_tokens: int = 256,
                 raw: bool = False, title: str | None = None, process: bool = True, pace: float = 0.0,
                 hindsight: HindsightHook | None = None, system: str | None = None) -> None:
        self.settings = settings or PolicySettings()
        self.system = system or ""       # the system prompt sent before the conversation ('' = none)
        self._system_sent: str | None = None   # the one the last turn went with (a changed one is noted again)
        self.sampling = sampling or SamplingConfig()
        self.max_new_tokens = max_new_tokens
        self.raw = raw
        self.pace = check_pace(pace)
        self.messages: Messages = []
        self.turn = 0
        self.load_kwargs = dict(load_kwargs or {})
        self.has_pair = pair is not None
        self.hindsight: Hindsight | None = None
        self._sampled_midway = False
        self._drafter: str | None = None   # a drafter picked for the next turn (set_drafter)
        if process and pair is None:
            self.link: _InThread | DecoderProcess = DecoderProcess(dict(self.load_kwargs), self.pace, hindsight)
        else:
            self.link = _InThread(dict(self.load_kwargs), pair, self.pace, hindsight)
        self.title = title or self._default_title(pair, self.load_kwargs)

    @property
    def process(self) -> bool:
        """Whether the decoder runs in a child process."""
        return not isinstance(self.link, _InThread)

    @staticmethod
    def _default_title(pair: ModelPair | None, kw: dict[str, Any]) -> str:
        if pair is not None:
            return pair_title(pair)
        if kw.get("pair"):
            return f"pair {kw['pair']}"
        if kw.get("target") or kw.get("draft"):
            return f"{kw.get('target')} + {kw.get('draft')}"
        return "demo pair"

    def prepare(self, progress: Progress) -> None:
        self.title = self.link.prepare(self.settings, self.sampling, progress) or self.title

    @property
    def system_note(self) -> str:
        """Why a system prompt would be left out of every turn ('' when the pair reads one), once loaded."""
        return RAW if self.raw else self.link.system_note

    @property
    def plain_speed(self) -> PlainSpeed | None:
        """Plain target-only decoding as timed where the models run (at load, again after a turn whose
        sampling costs differently): what the chat sets its speed against (session/plain_speed.py)."""
        return self.link.plain

    def events(self, prompt: str | None) -> Iterator[SourceItem]:
        if prompt is None:
            return
        messages = [*self.messages, {"role": "user", "content": prompt}]
        turn, self.turn = self.turn, self.turn + 1
        self.hindsight, self._sampled_midway = None, False
        pieces: list[str] = []
        summary: SessionSummary | None = None
        note_system, self._system_sent = self.system != self._system_sent, self.system
        if self._drafter is not None:
            self.link.set_drafter(self._drafter, self.settings, self.sampling)
            self._drafter = None
        for ev in self.link.turn(with_system(self.system, messages), self.raw, self.max_new_tokens, prompt, turn,
                                 note_system):
            if isinstance(ev, Notice):
                yield ev
                continue
            if isinstance(ev, StepEvent):
                pieces.extend(t.text for t in ev.emitted)
            elif isinstance(ev, SessionSummary):
                summary = ev
            yield ev
        reply = summary.text if summary is not None and summary.text else "".join(pieces)
        self.messages = [*messages, {"role": "assistant", "content": reply}]
        h = self.link.hindsight
        # the header says how the turn began; sampling switched on during it makes its text not the greedy one
        self.hindsight = sampled_session() if h is not None and h.applicable and self._sampled_midway else h

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        if settings is not None:
            self.settings = settings
        if sampling is not None:
            self.sampling = sampling
            self._sampled_midway = self._sampled_midway or not sampling.greedy
        self.link.request(settings, sampling)

    def set_system(self, text: str) -> None:
        """The system prompt for the next turns ('' removes it); the history is kept."""
        self.system = text.strip()

    def stop(self) -> None:
        self.link.stop()

    def set_pace(self, steps_per_s: float) -> None:
        """Cap the session at `steps_per_s` steps a second (0: full speed), from the next step boundary."""
        self.pace = check_pace(steps_per_s)
        self.link.set_pace(self.pace)

    def set_drafter(self, name: str) -> None:
        """Draft with `name` (model, self:int8, self:int4, prompt-lookup) from the next turn on.

        The next turn starts with notices: a self-draft being built, then the switch (or why it could not be).
        The new decoder is built when that turn starts, with the settings and sampling in force then: a
        control changed between the pick and the prompt applies to it, not only to the decoder it replaces.
        """
        self._drafter = name

    def close(self) -> None:
        """End the decoder process (if any)."""
        self.link.close()


class _InThread:
    """The decoder in the thread that iterates `events()`."""

    def __init__(self, load_kwargs: dict[str, Any], pair: ModelPair | None = None, pace: float = 0.0,
                 hindsight: HindsightHook | None = None) -> None:
        self.load_kwargs = load_kwargs
        self.pair = pair
        self.decoder: SpeculativeDecoder | None = None
        self.pacer = StepPacer(pace)
        self.hook = hindsight
        self.hindsight: Hindsight | None = None
        self.plain: PlainSpeed | None = None
        self.system_note = ""   # why the pair reads no system prompt ('' = it does)
        self._switch: tuple[str, PolicySettings, SamplingConfig] | None = None

    def prepare(self, settings: PolicySettings, sampling: SamplingConfig, progress: Progress) -> str:
        self.pair, self.decoder = load_decoder(self.load_kwargs, settings, sampling, progress, self.pair)
        self.plain = plain_at_load(self.pair, sampling, progress)
        self.system_note = system_unreadable(self.pair)
        return pair_title(self.pair)

    def turn(self, messages: Messages, raw: bool, max_new_tokens: int, user_text: str,
             turn: int, note_system: bool = True) -> Iterator[SourceItem]:
        if self.decoder is None or self.pair is None:   # both are set at load (prepare)
            raise GammatuneError("the models are not loaded yet")
        self.hindsight = None
        switch, self._switch = self._switch, None
        if switch is not None:
            self.decoder = (yield from switch_drafter(self.pair, *switch)) or self.decoder
        events: list[Event] = []
        for item in run_turn(self.pair, self.decoder, messages, raw, max_new_tokens, user_text, turn, self.pacer,
                             note_system=note_system):
            if not isinstance(item, Notice):
                events.append(item)
            yield item
        self.hindsight = run_hook(self.hook, self.pair, events)
        self.plain = plain_after_turn(self.pair, self.decoder, self.plain, turn)

    def request(self, settings: PolicySettings | None, sampling: SamplingConfig | None) -> None:
        if self.decoder is not None:
            self.decoder.request(settings=settings, sampling=sampling)

    def stop(self) -> None:
        if self.decoder is not None:
            self.decoder.stop()
        self.pacer.interrupt()

    def set_pace(self, steps_per_s: float) -> None:
        self.pacer.set(steps_per_s)

    def set_drafter(self, name: str, settings: PolicySettings, sampling: SamplingConfig) -> None:
        self._switch = (name, settings, sampling)

    def close(self) -> None:
        pass
