"""The live event source: real models, one decoder, a multi-turn conversation.

`prepare()` loads the pair (reporting stage and fraction) and builds the
`SpeculativeDecoder`; `events(prompt)` adds the prompt to the conversation,
runs one turn through the decoder with the whole history (the pair formats it
with its chat template) and adds the reply to the history when the turn ends.
`request()` and `stop()` go straight to the decoder, which is thread-safe and
acts at the next step boundary.

No Textual here: the UI runs `events()` in a worker thread.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..errors import GammatuneError
from .source import Progress


class LiveSource:
    """EventSource over a model pair.

    Either pass `pair` (an already loaded ModelPair) or `load_kwargs` for
    `load_pair(**load_kwargs)`; `raw=True` sends the conversation as plain
    concatenated text instead of through the chat template.
    """

    read_only = False

    def __init__(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None, *,
                 pair: Any = None, load_kwargs: dict[str, Any] | None = None, max_new_tokens: int = 256,
                 raw: bool = False, title: str | None = None) -> None:
        self.settings = settings or PolicySettings()
        self.sampling = sampling or SamplingConfig()
        self.pair = pair
        self.load_kwargs = dict(load_kwargs or {})
        self.max_new_tokens = max_new_tokens
        self.raw = raw
        self.decoder: Any = None
        self.messages: list[dict[str, str]] = []
        self.turn = 0
        self.title = title or self._default_title()
        self._stop_early = False

    def _default_title(self) -> str:
        if self.pair is not None:
            return f"{getattr(self.pair, 'name_target', 'target')} + {getattr(self.pair, 'name_draft', 'draft')}"
        kw = self.load_kwargs
        if kw.get("pair"):
            return f"pair {kw['pair']}"
        if kw.get("target") or kw.get("draft"):
            return f"{kw.get('target')} + {kw.get('draft')}"
        return "demo pair"

    # -- EventSource -------------------------------------------------------------------
    def prepare(self, progress: Progress) -> None:
        from ..engine import SpeculativeDecoder, load_pair

        if self.pair is None:
            self.pair = load_pair(**self.load_kwargs, progress=progress)
            self.title = self._default_title()
        else:
            progress("ready", 1.0)
        self.decoder = SpeculativeDecoder(self.pair, self.settings, self.sampling)

    def events(self, prompt: str | None) -> Iterator[Event]:
        if self.decoder is None:
            raise GammatuneError("the models are not loaded yet")
        if prompt is None:
            return
        messages = [*self.messages, {"role": "user", "content": prompt}]
        ids = self.pair.encode_prompt(messages, raw=self.raw)
        turn = self.turn
        pieces: list[str] = []
        summary: SessionSummary | None = None
        gen = self.decoder.generate(ids, self.max_new_tokens, user_text=prompt, turn=turn)
        self.turn += 1
        for ev in gen:
            if isinstance(ev, StepEvent):
                pieces.extend(t.text for t in ev.emitted)
            elif isinstance(ev, SessionSummary):
                summary = ev
            elif isinstance(ev, SessionHeader) and (ev.user_text != prompt or ev.turn != turn):
                ev = dataclasses.replace(ev, user_text=prompt, turn=turn)
            yield ev
        reply = summary.text if summary is not None and summary.text else "".join(pieces)
        self.messages = [*messages, {"role": "assistant", "content": reply}]

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        if settings is not None:
            self.settings = settings
        if sampling is not None:
            self.sampling = sampling
        if self.decoder is not None:
            self.decoder.request(settings=settings, sampling=sampling)

    def stop(self) -> None:
        if self.decoder is not None:
            self.decoder.stop()

    def reset(self) -> None:
        """Forget the conversation (the next prompt starts a fresh one)."""
        self.messages = []
        self.turn = 0
