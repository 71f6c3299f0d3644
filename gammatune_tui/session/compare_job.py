"""Measuring a comparison: several γ policies (and draft sources) on one pair, prompt and seed, each run several times.

The pair is loaded once; the methods then run one after another, each alone,
in rounds (every method once per round, then target-only decoding), so each
one's timing is its own (the TUI shows only a progress line while
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
from typing import Any, Callable, Iterator, Protocol, Sequence

from ..engine.common.names import MODEL, is_self_draft
from ..engine.common.pair import ModelPair
from ..engine.context import check_context
from ..engine.decoder import SpeculativeDecoder
from ..engine.loading.siblings import decoding_pair
from ..engine.drafting.draft_sources import DrafterSettings
from ..engine.events import Event, SessionHeader, StepEvent
from ..engine.loading.models import load_pair
from ..engine.plain import plain_decode
from ..engine.policies import PolicySettings, parse_methods
from ..engine.common.sampling import SamplingConfig
from ..errors import GammatuneError, InvalidParameter
from .compare import DEFAULT_REPEATS, MAX_METHODS, MIN_METHODS, CompareSummary, MethodRun, Reference, summarize
from .recording import RecordingWriter
from .system_prompt import fit_system, with_system
from .source import Progress

MeasureProgress = Callable[[int, int, str, int], None]
"""Called with (run index, run count, run label, tokens so far) while measuring; (n, n, "", 0) at the end."""

PlainFn = Callable[[SamplingConfig, int], Any]
"""(sampling, max_new_tokens) → a target-only run with `.tokens`, `.token_ids`, `.tokens_per_s`, `.stop_reason`."""


class RaceDecoder(Protocol):
    """What a contestant runs on: the engine's `SpeculativeDecoder`, or a stand-in without models (tests, notebooks)."""

    def generate(self, prompt: str | Sequence[int] | Sequence[dict], max_new_tokens: int = ..., *,
                 user_text: str | None = ...) -> Iterator[Event]: ...

    def stop(self) -> None: ...


DecoderFactory = Callable[..., RaceDecoder]
"""(settings, sampling, label) → a decoder: `generate(prompt, max_new_tokens, ...)` yielding events, and `stop()`.
A job given `drafters` also passes `drafter=` (a DrafterSettings)."""


def engine_factory(pair: ModelPair) -> DecoderFactory:
    """The real decoder on an already-loaded pair (loaded once for all methods)."""
    def make(settings: PolicySettings, sampling: SamplingConfig, label: str,
             drafter: DrafterSettings | None = None) -> SpeculativeDecoder:
        on, d = decoding_pair(pair, drafter)   # a self-draft contestant: the sibling pair that holds it
        return SpeculativeDecoder(on, settings, sampling, label=label, drafter=d)

    return make


def plain_factory(pair: ModelPair, prompt_ids: list[int]) -> PlainFn:
    """Plain target-only decoding of the job's prompt on an already-loaded pair."""
    def plain(sampling: SamplingConfig, max_new_tokens: int) -> Any:
        return plain_decode(pair, prompt_ids, max_new_tokens, sampling)

    return plain


def contestant_label(method: str, drafter: DrafterSettings | None, draft: object = None) -> str:
    """`gammatune+` alone; `gammatune+/lookup` or `gammatune+/model` when drafters race.

    The `model` drafter drafts with whatever --draft loaded: when that is a
    self-draft (`--draft self:int8`), the row is named for it, not `…/model`.
    """
    if drafter is None:
        return method
    if drafter.name == MODEL and is_self_draft(draft):
        return f"{method}/{DrafterSettings(str(draft)).name}"
    return f"{method}/{drafter.short}"


def _labelled(ev: Event, label: str) -> Event:
    if isinstance(ev, SessionHeader) and ev.label != label:
        return dataclasses.replace(ev, label=label)
    return ev


class CompareJob:
    """The methods of one comparison, measured in rounds; thread-safe `stop()` ends the current run and skips the rest.

    `prompt` is the user's text: sent as one chat message, or as raw text with
    `raw=True`. The pair comes from `load_pair(**load_kwargs)` at `prepare()`,
    unless a decoder `factory` is given (tests, notebooks). A `record` path is
    opened at once (an unwritable path fails before any model loads) and gets
    each run's stream when that run is done, outside its timing.

    Each of `repeats` rounds runs every method once, in order, then plain
    target-only decoding (when the pair is loaded here, or a `plain` function
    is given): interleaved rounds spread a change in the machine's load over
    every method instead of on whichever ran last.
    """

    def __init__(self, methods: str | Sequence[str], settings: PolicySettings, sampling: SamplingConfig, prompt: str,
                 max_new_tokens: int, *, raw: bool = False, load_kwargs: dict[str, Any] | None = None,
                 factory: DecoderFactory | None = None, record: str | os.PathLike | None = None,
                 warmup_tokens: int = 8, repeats: int = DEFAULT_REPEATS, plain: PlainFn | None = None,
                 drafters: Sequence[DrafterSettings] | None = None, system: str | None = None) -> None:
        several = drafters is not None and len(drafters) > 1
        names = parse_methods(methods if isinstance(methods, str) else list(methods),
                              at_least=1 if several else MIN_METHODS, at_most=MAX_METHODS)
        ds: list[DrafterSettings | None] = list(drafters) if drafters else [None]
        n = len(names) * len(ds)
        if not (MIN_METHODS <= n <= MAX_METHODS):
            raise InvalidParameter(f"{len(names)} methods × {len(ds)} drafters make {n} contestants; "
                                   f"compare races {MIN_METHODS} to {MAX_METHODS}")
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise InvalidParameter(f"--repeats must be a whole number >= 1, got {repeats!r}")
        # (label, method, drafter): the methods side by side, each once per drafter
        draft = (load_kwargs or {}).get("draft")
        self.contestants = [(contestant_label(m, d if several else None, draft), m, d) for m in names for d in ds]
        self.methods = [label for label, _, _ in self.contestants]  # what the panes and runs are called
        self.settings, self.sampling = settings, sampling
        self.prompt = prompt
        self.raw = raw
        self.system = system or ""
        self.notice = ""     # set at prepare() when the pair cannot read the system prompt (it is left out)
        self._messages: list[dict[str, str]] | None = None
        self.max_new_tokens = max_new_tokens
        self.load_kwargs = dict(load_kwargs or {})
        self.factory = factory
        self.plain = plain
        self.repeats = repeats
        self.warmup_tokens = warmup_tokens
        self.recorder = RecordingWriter(record) if record else None
        self.runs: list[MethodRun] = []          # one per method: the median run, every run's tokens/s
        self.measured: dict[str, list[MethodRun]] = {}
        self.reference: Reference | None = None
        self._plain_runs: list[Any] = []
        self._reported: set[str] = set()
        self._stopped = False
        self._current: RaceDecoder | None = None

    @property
    def decoder_prompt(self) -> Any:
        """What the decoders get: the raw text, or one user message for the pair's chat format."""
        if self.raw:
            return self.prompt
        return self._messages or with_system(self.system, [{"role": "user", "content": self.prompt}])

    @property
    def total_runs(self) -> int:
        return self.repeats * (len(self.methods) + (1 if self.plain is not None else 0))

    def settings_for(self, method: str) -> PolicySettings:
        return self.settings.with_changes(method=self._contestant(method)[1])

    def _contestant(self, label: str) -> tuple[str, str, DrafterSettings | None]:
        return next((c for c in self.contestants if c[0] == label), (label, label, None))

    def prepare(self, progress: Progress | None = None) -> None:
        """Loads the pair (the slow part, with progress) unless the job was given a decoder factory.

        With the pair loaded here, the prompt and `max_new_tokens` are checked
        against its context (ContextTooLong) before anything runs.
        """
        if self.factory is None:
            if not self.load_kwargs:
                raise GammatuneError("no models to compare (neither load_kwargs nor a decoder factory)")
            pair = load_pair(**self.load_kwargs, progress=progress)
            if self.system and not self.raw:   # kept where the pair reads a chat format, else left out, said
                self._messages, self.notice = fit_system(pair, self.decoder_prompt)
            prompt_ids = pair.encode_prompt(self.decoder_prompt, raw=self.raw)
            check_context(pair, len(prompt_ids), self.max_new_tokens)
            self.factory = engine_factory(pair)
            if self.plain is None:
                self.plain = plain_factory(pair, prompt_ids)
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
        if self.plain is not None and not self._stopped:
            self.plain(self.sampling, self.warmup_tokens)

    def stream(self, progress: MeasureProgress | None = None,
               on_method_done: Callable[[MethodRun], None] | None = None,
               on_run_done: Callable[[MethodRun], None] | None = None) -> Iterator[tuple[str, Event]]:
        """Yields (label, event) for every run in turn; collects each method's median run in `self.runs`.

        `on_run_done` gets each measured run, `on_method_done` each method's
        median run once all its runs are in; both run outside any timed region.
        """
        self.warm_up()
        n = self.total_runs
        i = 0
        for rep in range(self.repeats):
            for method in self.methods:
                if self._stopped:
                    break
                label = method if self.repeats == 1 else f"{method} (run {rep + 1}/{self.repeats})"
                run = MethodRun(method)
                self.measured.setdefault(method, []).append(run)
                if progress:
                    progress(i, n, label, 0)
                dec = self._current = self._decoder(method, method)
                for ev in dec.generate(self.decoder_prompt, max_new_tokens=self.max_new_tokens,
                                       user_text=self.prompt):
                    ev = _labelled(ev, method)
                    run.add(ev)
                    if progress and isinstance(ev, StepEvent):
                        progress(i, n, label, run.stats.tokens)
                    yield method, ev
                self._current = None
                i += 1
                if on_run_done is not None:
                    on_run_done(run)
                if rep == self.repeats - 1 and not self._stopped:
                    self._method_done(method, on_method_done)
            if self.plain is not None and not self._stopped:
                if progress:
                    progress(i, n, "target-only" if self.repeats == 1 else f"target-only (run {rep + 1}/{self.repeats})", 0)
                self._plain_runs.append(self.plain(self.sampling, self.max_new_tokens))
                i += 1
        for method in self.methods:   # stopped early: what each method has so far
            if self.measured.get(method) and method not in self._reported:
                self._method_done(method, on_method_done)
        self.runs = [MethodRun.from_repeats(self.measured[m]) for m in self.methods if self.measured.get(m)]
        if self._plain_runs:
            last = self._plain_runs[-1]
            self.reference = Reference(tuple(p.tokens_per_s for p in self._plain_runs), last.tokens,
                                       tuple(last.token_ids), last.stop_reason, self.sampling.greedy,
                                       margins=tuple(getattr(last, "margins", ())))
        if progress:
            progress(n, n, "", 0)

    def _method_done(self, method: str, on_method_done: Callable[[MethodRun], None] | None) -> None:
        self._reported.add(method)
        if on_method_done is not None:
            on_method_done(MethodRun.from_repeats(self.measured[method]))

    def run(self, progress: MeasureProgress | None = None,
            on_method_done: Callable[[MethodRun], None] | None = None) -> CompareSummary:
        """Measures every run (the recording gets each stream once that run is done), then summarises."""
        def done(run: MethodRun) -> None:
            if self.recorder is not None:
                self.recorder.write_all(run.events)

        try:
            for _ in self.stream(progress, on_method_done, done):
                pass
        finally:
            if self.recorder is not None:
                self.recorder.close()
        return self.summary()

    def summary(self) -> CompareSummary:
        """The ranked table of what has been measured, with the target-only row when it ran."""
        return summarize(self.runs, self.reference)

    def stop(self) -> None:
        self._stopped = True
        cur = self._current
        if cur is not None:
            cur.stop()

    def _decoder(self, method: str, label: str) -> RaceDecoder:
        if self.factory is None:
            raise GammatuneError("the models are not loaded yet")
        drafter = self._contestant(method)[2]
        if drafter is None:
            return self.factory(self.settings_for(method), self.sampling, label)
        return self.factory(self.settings_for(method), self.sampling, label, drafter=drafter)
