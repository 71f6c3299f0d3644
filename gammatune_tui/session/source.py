"""What the UI drives: an event source, live (models), recorded (a file) or synthetic (tests).

The chat and compare screens never know which one they have. A source's
`events()` is a blocking iterator meant to run in a worker thread; controls
reach it through `request()` and `stop()`, which are thread-safe and act at the
next step boundary. The source is the one place that holds the settings in
force: the controls show `settings` and `sampling` and send changes back
through `request()`.

Sources: `live.LiveSource`, `replay.ReplaySource`, `synthetic.SyntheticSource`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, Union, runtime_checkable

from ..engine.events import Event
from ..engine.policies import PolicySettings
from ..engine.common.sampling import SamplingConfig

Progress = Callable[[str, float], None]
"""Called with (stage, fraction 0..1) while a source prepares (e.g. loads models)."""


@dataclass(frozen=True)
class Notice:
    """Something the user should know about a turn that is not an event (never recorded).

    E.g. that the oldest turns of a chat no longer fit the model's context.
    A live source yields it before the turn's header; the app shows it.
    """

    text: str
    severity: str = "warning"
    title: str = "Context"    # the notification's title: what the notice is about


SourceItem = Union[Event, Notice]


@runtime_checkable
class EventSource(Protocol):
    title: str                # shown in the app's title (e.g. "demo pair" or "replay: file.jsonl")
    read_only: bool           # True for recordings: controls are shown but disabled

    @property
    def settings(self) -> PolicySettings:
        """The policy settings in force (or, for a recording, recorded)."""

    @property
    def sampling(self) -> SamplingConfig:
        """The sampling settings in force (or recorded)."""

    def prepare(self, progress: Progress) -> None:
        """Slow setup (model loading); called once in a worker before the first events()."""

    def events(self, prompt: str | None) -> Iterator[SourceItem]:
        """One session's events (header, steps, summary), perhaps after Notices. `prompt` None = a recording's next session."""

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        """Change policy/sampling from the next step on (ignored by read-only sources)."""

    def stop(self) -> None:
        """End the running session cleanly at the next step boundary."""

    # Optional: a live source may also have `pace` (steps per second, 0 = full speed) and
    # `set_pace(steps_per_s)`, acting between two steps; the app then offers the pace key.
