"""What every kind's trace shares, as a protocol: the type of "a trace of any kind".

The kinds' trace classes (model_trace.py `Trace`, lookup_trace.py
`LookupTrace`, head_trace.py `HeadTrace`) stand above the modules that play,
price and budget a session (session_play.py, cost_model.py: each kind's
player imports them), so those modules cannot name the classes without an
import circle (tests/test_architecture.py counts every import, TYPE_CHECKING
ones too). This protocol imports nothing of the simulator and names what they
all read; the modules that dispatch through a trace's kind (simulate.py,
oracle.py, replays.py, reference.py) take it too. mypy checks each kind's
trace against it where its player hands it to `SessionPlay` or `play_windows`.
"""

from __future__ import annotations

from typing import Any, Protocol


class SimTrace(Protocol):
    """One prompt's trace, of any kind: its text, budget, costs outside the steps, and the live-run checks."""

    @property
    def kind(self) -> str:
        """The draft source's name: which kind plays it (trace_kinds.py)."""

    @property
    def prompt_id(self) -> str: ...

    @property
    def prompt_ids(self) -> list[int]: ...

    @property
    def tokens(self) -> list[int]:
        """The target's greedy continuation (ends with EOS when it stopped there)."""

    @property
    def draft_ids(self) -> list[int]:
        """The source's first proposal at each continuation position (-1: none)."""

    @property
    def off_depth(self) -> int:
        """The longest window every policy can replay here, minus one."""

    @property
    def eos_ids(self) -> list[int]: ...

    @property
    def max_new_tokens(self) -> int: ...

    session_s: float   # per-session cost outside the steps (set again where a machine times its own)

    @property
    def plain_s(self) -> float:
        """Target-only decoding of the continuation, prefill included."""

    @property
    def target_flips(self) -> list[int]: ...

    @property
    def fragile(self) -> int: ...

    @property
    def ended_eos(self) -> bool: ...

    def to_json(self) -> dict[str, Any]:
        """The saved form (`trace_kinds.trace_from_json` reads it back)."""


class ChainTrace(SimTrace, Protocol):
    """A trace that keeps the source's whole proposal from every position (a head's chain, prompt lookup's copy),
    rather than a draft model's one token and its off-path proposals: what llama.cpp's rule and the doctor's run
    statistics read of it, without naming the kinds."""

    proposals: list[list[int]]   # position n → the proposal after prompt + tokens[:n] ([]: none)
    tops: list[list[float]]      # each proposed token's top-1 probability (a stand-in for prompt lookup)
    depth: int                   # the longest proposal recorded


__all__ = ["ChainTrace", "SimTrace"]
