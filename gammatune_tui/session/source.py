"""What the UI drives: an event source, live (models), recorded (a file) or synthetic (tests).

The chat and compare screens never know which one they have. A source's
`events()` is a blocking iterator meant to run in a worker thread; controls
reach it through `request()` and `stop()`, which are thread-safe and act at the
next step boundary. The source is the one place that holds the settings in
force: the controls show `settings` and `sampling` and send changes back
through `request()`. The protocol is complete: every source has every member
of `EventSource`, and what only some can do (pace, a system prompt, a drafter
switch) is an optional protocol checked with `isinstance`, so the screens
never probe a source with `getattr`.

Sources: `live.LiveSource`, `replay.ReplaySource`, `synthetic.SyntheticSource`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Literal, Protocol, Union, runtime_checkable

from ..engine.events import Event
from ..engine.policies import PolicySettings
from ..engine.common.sampling import SamplingConfig
from .hindsight import Hindsight
from .plain_speed import PlainSpeed

Progress = Callable[[str, float], None]
"""Called with (stage, fraction 0..1) while a source prepares (e.g. loads models)."""


@dataclass(frozen=True)
class Notice:
    """Something the user should know about a turn that is not an event (never recorded).

    E.g. that the oldest turns of a chat no longer fit the model's context.
    A live source yields it before the turn's header; the app shows it.
    """

    text: str
    severity: Literal["information", "warning", "error"] = "warning"   # Textual's notice levels
    title: str = "Context"    # the notification's title: what the notice is about


SourceItem = Union[Event, Notice]


@runtime_checkable
class EventSource(Protocol):
    """What every source has, so a screen calls it without asking first (no `getattr` probes).

    Where a source has nothing to say, the member still exists: a recording
    closes nothing, a chat has no next session, only a live source times
    plain decoding or checks a turn against the oracle. What only some
    sources can do is an optional protocol below (`PacedSource`,
    `SystemPromptSource`, `DrafterSource`), checked with `isinstance`.
    """

    title: str                # shown in the app's title (e.g. "demo pair" or "replay: file.jsonl")
    read_only: bool           # True for recordings: controls are shown but disabled
    hindsight: Hindsight | None   # the last turn's oracle check, once its events are over (None: not made)

    @property
    def settings(self) -> PolicySettings:
        """The policy settings in force (or, for a recording, recorded)."""

    @property
    def sampling(self) -> SamplingConfig:
        """The sampling settings in force (or recorded)."""

    @property
    def plain_speed(self) -> PlainSpeed | None:
        """Plain target decoding timed where the models run (None: not measured, e.g. a recording)."""

    @property
    def has_next_session(self) -> bool:
        """Whether `events(None)` has another session to give (a recording's next one; False for a chat)."""

    def prepare(self, progress: Progress) -> None:
        """Slow setup (model loading); called once in a worker before the first events()."""

    def events(self, prompt: str | None) -> Iterator[SourceItem]:
        """One session's events (header, steps, summary), perhaps after Notices. `prompt` None = a recording's next session."""

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        """Change policy/sampling from the next step on (ignored by read-only sources)."""

    def stop(self) -> None:
        """End the running session cleanly at the next step boundary."""

    def close(self) -> None:
        """Let go of what the source holds (a decoder process); called once when the screen goes."""


@runtime_checkable
class PacedSource(Protocol):
    """A source that can be held back to a number of steps a second; the chat then offers the pace keys."""

    pace: float               # steps per second, 0 = full speed

    def set_pace(self, steps_per_s: float) -> None:
        """Cap the steps per second from the next step boundary (0: full speed)."""


@runtime_checkable
class SystemPromptSource(Protocol):
    """A source that sends a system prompt before the conversation (`/system TEXT` in the chat)."""

    system: str               # the one in force ('' = none)
    system_note: str          # once loaded: why no system prompt could reach the pair ('' = one can)

    def set_system(self, text: str) -> None:
        """The system prompt from the next turn on ('' removes it)."""


@runtime_checkable
class DrafterSource(Protocol):
    """A source whose drafter can be switched between turns (the palette's "Drafter: …" entries)."""

    def set_drafter(self, name: str) -> None:
        """Draft with `name` from the next turn on."""
