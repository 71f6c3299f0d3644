"""Measuring a comparison: several γ policies on one pair, prompt and seed.

The pair is loaded once; the methods then run one after another, each alone,
so each one's timing is its own (the TUI shows only a progress line while
measuring and races the recorded streams afterwards; `compare --print`
prints them). The TUI's worker and the headless command drive the same
`CompareJob`: `prepare()` (load), then `run()` or `stream()`, and `stop()`
from any thread.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Iterator, Sequence

from ..engine.decoder import SpeculativeDecoder
from ..engine.events import Event, SessionHeader, StepEvent
from ..engine.models import load_pair
from ..engine.policies import PolicySettings, parse_methods
from ..engine.sampling import SamplingConfig
from ..errors import GammatuneError
from .compare import MAX_METHODS, MIN_METHODS, CompareSummary, MethodRun, summarize
from .recording import RecordingWriter
from .source import Progress

MeasureProgress = Callable[[int, int, str, int], None]
"""Called with (method index, method count, method label, tokens so far) while measuring; (n, n, "", 0) at the end."""

DecoderFactory = Callable[[PolicySettings, SamplingConfig, str], Any]
"""(settings, sampling, label) → a decoder: `generate(prompt, max_new_tokens, ...)` yielding events, and `stop()`."""


def engine_factory(pair: Any) -> DecoderFactory:
    """The real decoder on an already-loaded pair (loaded once for all methods)."""
    def make(settings: PolicySettings, sampling: SamplingConfig, label: str) -> Any:
        return SpeculativeDecoder(pair, settings, sampling, label=label)

    return make


def _labelled(ev: Event, label: str) -> Event:
    if isinstance(ev, SessionHeader) and ev.label != label:
        return dataclasses.replace(ev, label=label)
    return ev


class CompareJob:
    """The methods of one comparison, measured one by one; thread-safe `stop()` ends the current and skips the rest.

    `prompt` is the user's text: sent as one chat message, or as raw text with
    `raw=True`. The pair comes from `load_pair(**load_kwargs)` at `prepare()`,
    unless a decoder `factory` is given (tests, notebooks). A `record` path is
    opened at once (an unwritable path fails before any model loads) and gets
    each method's stream when that method is done, outside its timing.
    """

    def __init__(self, methods: str | Sequence[str], settings: PolicySettings, sampling: SamplingConfig, prompt: str,
                 max_new_tokens: int, *, raw: bool = False, load_kwargs: dict[str, Any] | None = None,
                 factory: DecoderFactory | None = None, record: str | os.PathLike | None = None,
                 warmup_tokens: int = 8) -> None:
        self.methods = parse_methods(methods if isinstance(methods, str) else list(methods),
                                     at_least=MIN_METHODS, at_most=MAX_METHODS)
        self.settings, self.sampling = settings, sampling
        self.prompt = prompt
        self.raw = raw
        self.max_new_tokens = max_new_tokens
        self.load_kwargs = dict(load_kwargs or {})
        self.factory = factory
        self.warmup_tokens = warmup_tokens
        self.recorder = RecordingWriter(record) if record else None
        self.runs: list[MethodRun] = []
        self._stopped = False
        self._current: Any = None

    @property
    def decoder_prompt(self) -> Any:
        """What the decoders get: the raw text, or one user message for the pair's chat format."""
        return self.prompt if self.raw else [{"role": "user", "content": self.prompt}]

    def settings_for(self, method: str) -> PolicySettings:
        return self.settings.with_changes(method=method)

    def prepare(self, progress: Progress | None = None) -> None:
        """Loads the pair (the slow part, with progress) unless the job was given a decoder factory."""
        if self.factory is None:
            if not self.load_kwargs:
                raise GammatuneError("no models to compare (neither load_kwargs nor a decoder factory)")
            self.factory = engine_factory(load_pair(**self.load_kwargs, progress=progress))
        if progress is not None:
            progress("ready", 1.0)

    def warm_up(self) -> None:
        """A few untimed tokens first, so the first method does not pay for cold caches and lazy init."""
        if self.warmup_tokens <= 0:
            return
        dec = self._decoder(self.methods[0], "warm-up")
        for _ in dec.generate(self.decoder_prompt, max_new_tokens=self.warmup_tokens):
            if self._stopped:
                break

    def stream(self, progress: MeasureProgress | None = None,
               on_method_done: Callable[[MethodRun], None] | None = None) -> Iterator[tuple[str, Event]]:
        """Yields (label, event) for every method in turn; also collects them in `self.runs`.

        `on_method_done` runs between two methods, outside any timed region.
        """
        self.warm_up()
        n = len(self.methods)
        for i, method in enumerate(self.methods):
            if self._stopped:
                return
            run = MethodRun(method)
            self.runs.append(run)
            if progress:
                progress(i, n, method, 0)
            dec = self._current = self._decoder(method, method)
            for ev in dec.generate(self.decoder_prompt, max_new_tokens=self.max_new_tokens, user_text=self.prompt):
                ev = _labelled(ev, method)
                run.add(ev)
                if progress and isinstance(ev, StepEvent):
                    progress(i, n, method, run.stats.tokens)
                yield method, ev
            self._current = None
            if on_method_done is not None:
                on_method_done(run)
        if progress:
            progress(n, n, "", 0)

    def run(self, progress: MeasureProgress | None = None,
            on_method_done: Callable[[MethodRun], None] | None = None) -> CompareSummary:
        """Measures every method (the recording gets each stream once its method is done), then summarises."""
        def done(run: MethodRun) -> None:
            if self.recorder is not None:
                self.recorder.write_all(run.events)
            if on_method_done is not None:
                on_method_done(run)

        try:
            for _ in self.stream(progress, done):
                pass
        finally:
            if self.recorder is not None:
                self.recorder.close()
        return summarize(self.runs)

    def stop(self) -> None:
        self._stopped = True
        cur = self._current
        if cur is not None:
            cur.stop()

    def _decoder(self, method: str, label: str) -> Any:
        if self.factory is None:
            raise GammatuneError("the models are not loaded yet")
        return self.factory(self.settings_for(method), self.sampling, label)
