"""Logits processors (a repetition penalty, no-repeat n-grams, bad words…) applied to both models, per position.

Why this is exact: transformers' assisted generation applies the user's
`LogitsProcessorList` to the target's logits at every verified position, and
to the assistant's at every drafted one, each time with the `input_ids`
prefix up to that position. The target's processed law is then exactly the
one `generate` with those processors samples from (or takes the argmax of),
and the draft's q is whatever the draft proposes from; the accept test keeps
the output on the target's law. gammatune does the same, before its served
distributions (temperature, top-k, top-p) and the accept test.

Where: between a runner and the step loop. `ProcessedRunner` wraps one
model's runner, keeps the ids its cache holds in a device buffer (written
from the ids fed, never read back) and returns processed logits, so drafting
and verification do not change at all. With no processors the runners are
not wrapped: the default path pays nothing (`wrap_runner` returns the runner).

A processor must be a function of (input_ids, scores): called on prefixes of
several lengths in one step, and again on a prefix after a rewind. The few of
transformers' that keep state between calls (classifier-free guidance runs
the model itself with a cache of its own; Whisper's and Bark's) are refused
by name (`check_processors`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import torch

from ..errors import InvalidParameter

if TYPE_CHECKING:
    from .common.sampling import SamplingConfig
    from .runners.base import Runner

# transformers' processors that are not functions of (input_ids, scores): each call moves hidden state on
STATEFUL = frozenset({
    "UnbatchedClassifierFreeGuidanceLogitsProcessor", "ClassifierFreeGuidanceLogitsProcessor",
    "WhisperTimeStampLogitsProcessor", "WhisperNoSpeechDetection", "AlternatingCodebooksLogitsProcessor",
    "BarkEosPrioritizerLogitsProcessor", "DiaClassifierFreeGuidanceLogitsProcessor",
    "DiaEOSChannelFilterLogitsProcessor", "DiaEOSDelayPatternLogitsProcessor",
})


def check_processors(processors: Iterable[Any]) -> None:
    """Refuse, in one line naming it, a processor the engine cannot apply position by position."""
    for p in processors:
        name = type(p).__name__
        if name in STATEFUL:
            raise InvalidParameter(f"{name} is not supported by gammatune's decoding: it keeps state between calls "
                                   "(or runs a model of its own), so it cannot be applied to drafted positions")
        if not callable(p):
            raise InvalidParameter(f"logits processor {name} is not callable")


def repetition_processors(penalty: float) -> list:
    """The repetition penalty as transformers' own processor ([] at 1.0, which changes nothing)."""
    if penalty == 1.0:
        return []
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    return [RepetitionPenaltyLogitsProcessor(penalty=float(penalty))]


def session_processors(sampling: SamplingConfig, extra: Iterable[Any] | None) -> list:
    """Everything a session applies before serving: the user's processors, then the repetition penalty.

    The order is transformers': a `repetition_penalty` in a GenerationConfig is
    built before the processors a user passes are merged in; here the user's
    list (hf.py) already holds it, and the command line's `--repetition-penalty`
    comes alone."""
    out = list(extra or [])
    out += repetition_processors(getattr(sampling, "repetition_penalty", 1.0))
    check_processors(out)
    return out


class ProcessedRunner:
    """A runner whose logits come back processed, row by row with each row's own prefix.

    `raw_rows` (a dict, optional) collects each row's unprocessed logits by the
    position of the token it predicts (a later forward over the same position,
    after a rewind, replaces it), for `generate(output_scores=…, output_logits=…)`.
    Everything else is the wrapped runner's (runners/base.py's contract).
    """

    def __init__(self, runner: Runner, processors: _Chain, raw_rows: dict | None = None):
        self.runner = runner
        self.processors = processors
        self.raw_rows = raw_rows
        self._ids = torch.zeros((1, 0), dtype=torch.long, device=runner.device)

    def __getattr__(self, name: str) -> Any:   # kind, device, model, kv, capacity, graph details…
        return getattr(self.runner, name)

    @property
    def length(self) -> int:
        return self.runner.length

    def start(self, capacity: int, gamma_max: int | None = None) -> None:
        self.runner.start(capacity, gamma_max)
        self._ids = torch.zeros((1, max(capacity, 1)), dtype=torch.long, device=self.runner.device)

    def rewind(self, length: int) -> None:
        self.runner.rewind(length)   # the ids past `length` are written over by the next forward

    def _write(self, ids: torch.Tensor) -> int:
        start = self.runner.length
        end = start + ids.shape[1]
        if end > self._ids.shape[1]:   # a session that outgrew its start capacity (a runner grows too)
            more = torch.zeros((1, end - self._ids.shape[1]), dtype=torch.long, device=self._ids.device)
            self._ids = torch.cat((self._ids, more), dim=1)
        self._ids[:, start:end] = ids if ids.device == self._ids.device else ids.to(self._ids.device)
        return end

    def prefill(self, ids: torch.Tensor) -> None:
        self._write(ids)
        self.runner.prefill(ids)

    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        end = self._write(ids)
        logits = self.runner.forward(ids, keep).float()
        if keep == 1 and self.raw_rows is None:   # a drafted token: one row, its prefix everything fed
            return self.processors(self._ids[:, :end], logits) if self.processors else logits
        first = end - keep   # row j predicts the token at position first + j + 1 from ids[:first + j + 1]
        rows = []
        for j in range(keep):
            n = first + j + 1
            row = logits[j:j + 1]
            if self.raw_rows is not None:
                self.raw_rows[n] = row
            rows.append(self.processors(self._ids[:, :n], row) if self.processors else row)
        return torch.cat(rows)


class _Chain:
    """A plain list of processors called in order (a LogitsProcessorList without its kwargs checks)."""

    def __init__(self, processors: list):
        self.items = processors

    def __bool__(self) -> bool:
        return bool(self.items)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        for p in self.items:
            scores = p(input_ids, scores)
        return scores


def wrap_runner(runner: Runner | None, processors: list, raw_rows: dict | None = None) -> Any:
    """`runner` itself when there is nothing to apply or record (the default path), else a ProcessedRunner.

    Typed Any on the way out: a ProcessedRunner stands in for a Runner (it forwards what it does not
    override), which the type of the slot it goes into (`SourceContext.runner`) cannot say."""
    if runner is None or (not processors and raw_rows is None):
        return runner
    return ProcessedRunner(runner, _Chain(processors), raw_rows)


__all__ = ["ProcessedRunner", "STATEFUL", "check_processors", "repetition_processors", "session_processors",
           "wrap_runner"]
