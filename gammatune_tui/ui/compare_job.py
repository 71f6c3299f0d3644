"""What the compare screen measures, and the messages its worker thread posts.

Kept apart from the screen so the measuring (model loading, one method at a
time) can be read and tested without any widget.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from textual.message import Message

from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..errors import GammatuneError
from ..session.compare import CompareRunner, CompareSummary, MethodRun, engine_factory
from ..session.recording import RecordingWriter


class CompareJob:
    """Loads the pair once (unless given a decoder factory) and runs the methods one by one."""

    def __init__(self, methods: Sequence[str], settings: PolicySettings, sampling: SamplingConfig, prompt: Any,
                 max_new_tokens: int, *, user_text: str | None = None, factory: Callable | None = None,
                 load: Callable[..., Any] | None = None, record: RecordingWriter | None = None,
                 warmup_tokens: int = 8):
        self.methods = list(methods)
        self.settings, self.sampling = settings, sampling
        self.prompt, self.user_text = prompt, user_text
        self.max_new_tokens = max_new_tokens
        self.factory = factory
        self.load = load
        self.record = record
        self.warmup_tokens = warmup_tokens
        self.runner: CompareRunner | None = None
        self._stopped = False

    def prepare(self, progress: Callable[[str, float], None]) -> None:
        if self.factory is None:
            if self.load is None:
                raise GammatuneError("no models to compare (neither a pair loader nor a decoder factory)")
            pair = self.load(progress)
            self.factory = engine_factory(pair)
        progress("ready", 1.0)

    def measure(self, progress: Callable[[int, int, str, int], None],
                on_method_done: Callable[[MethodRun], None]) -> CompareSummary:
        self.runner = CompareRunner(self.factory, self.methods, self.settings, self.sampling, self.prompt,
                                    self.max_new_tokens, user_text=self.user_text,
                                    warmup_tokens=self.warmup_tokens)
        if self._stopped:
            self.runner.stop()
        try:
            return self.runner.run(progress, self.record, on_method_done)
        finally:
            if self.record is not None:
                self.record.close()

    def stop(self) -> None:
        self._stopped = True
        if self.runner is not None:
            self.runner.stop()


# -- messages from the worker ----------------------------------------------------------------
class CompareProgress(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CompareProgress)


class MethodMeasured(Message):
    def __init__(self, run: MethodRun) -> None:
        super().__init__()
        self.run = run


class MeasureDone(Message):
    def __init__(self, error: str = "") -> None:
        super().__init__()
        self.error = error
