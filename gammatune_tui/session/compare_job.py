"""Measuring a comparison: several γ policies (and draft sources) on one pair, prompt and seed.

The pair is loaded once; the methods then run one after another, each alone,
so each one's timing is its own (the TUI shows only a progress line while
measuring and races the recorded streams afterwards; `compare --print`
prints them). The TUI's worker and the headless command drive the same
`CompareJob`: `prepare()` (load), then `run()` or `stream()`, and `stop()`
from any thread.

With `drafters` (e.g. the draft model and prompt lookup) every method runs
once per drafter: the contestants are methods × drafters, labelled
`method/model` and `method/lookup`, so model drafting races prompt lookup on
the same prompt and target.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Iterator, Sequence

from ..engine.decoder import SpeculativeDecoder
from ..engine.draft_sources import DrafterSettings
from ..engine.events import Event, SessionHeader, StepEvent
from ..engine.models import load_pair
from ..engine.policies import PolicySettings, parse_methods
from ..engine.sampling import SamplingConfig
from ..errors import GammatuneError, InvalidParameter
from .compare import MAX_METHODS, MIN_METHODS, CompareSummary, MethodRun, summarize
from .recording import RecordingWriter
from .source import Progress

MeasureProgress = Callable[[int, int, str, int], None]
"""Called with (method index, method count, method label, tokens so far) while measuring; (n, n, "", 0) at the end."""

DecoderFactory = Callable[..., Any]
"""(settings, sampling, label) → a decoder: `generate(prompt, max_new_tokens, ...)` yielding events, and `stop()`.
A job given `drafters` also passes `drafter=` (a DrafterSettings)."""


def engine_factory(pair: Any) -> DecoderFactory:
    """The real decoder on an already-loaded pair (loaded once for all methods)."""
    def make(settings: PolicySettings, sampling: SamplingConfig, label: str,
             drafter: DrafterSettings | None = None) -> Any:
        return SpeculativeDecoder(pair, settings, sampling, label=label, drafter=drafter)

    return make


def contestant_label(method: str, drafter: DrafterSettings | None) -> str:
    """`gammatune+` alone; `gammatune+/lookup` or `gammatune+/model` when drafters race."""
    return method if drafter is None else f"{method}/{drafter.short}"


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
                 warmup_tokens: int = 8, drafters: Sequence[DrafterSettings] | None = None) -> None:
        several = bool(drafters) and len(drafters) > 1  # type: ignore[arg-type]
        names = parse_methods(methods if isinstance(methods, str) else list(methods),
                              at_least=1 if several else MIN_METHODS, at_most=MAX_METHODS)
        ds: list[DrafterSettings | None] = list(drafters) if drafters else [None]
        n = len(names) * len(ds)
        if not (MIN_METHODS <= n <= MAX_METHODS):
            raise InvalidParameter(f"{len(names)} methods × {len(ds)} drafters make {n} contestants; "
                                 f"compare races {MIN_METHODS} to {MAX_METHODS}")
        # (label, method, drafter): the methods side by side, each once per drafter
        self.contestants = [(contestant_label(m, d if several else None), m, d) for m in names for d in ds]
        self.methods = [label for label, _, _ in self.contestants]  # what the panes and runs are called
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
        return self.settings.with_changes(method=self._contestant(method)[1])

    def _contestant(self, label: str) -> tuple[str, str, DrafterSettings | None]:
        return next((c for c in self.contestants if c[0] == label), (label, label, None))

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
        drafter = self._contestant(method)[2]
        if drafter is None:
            return self.factory(self.settings_for(method), self.sampling, label)
        return self.factory(self.settings_for(method), self.sampling, label, drafter=drafter)
