"""A deterministic event source with no models: for UI tests, benchmarks and demos.

It plays the engine's part with made-up tokens: the real policy (from
`PolicySettings`) plans γ and learns from a seeded acceptance process, and
`request()`/`stop()` act at the next step boundary exactly as the live source
promises, so UI tests see settings changes carried by the next event. Timings
are fixed numbers, so screenshots of it are reproducible.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Iterator, Sequence

from ..engine.events import (
    DraftedToken, EmittedToken, Event, SessionHeader, SessionSummary, StepEvent, TargetToken,
)
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..session.source import Progress

WORDS: tuple[str, ...] = (
    "def", " parse", "(", "self", ",", " text", ")", ":", "\n    ", "return", " [", "line", ".strip", "()",
    " for", " line", " in", " text", ".split", "lines", "()]", "\n", "    if", " not", " line", ":", "\n        ",
    "continue", " value", " =", " int", "(", "x", ")", " +", " 1",
)


class SyntheticSource:
    """Fake live source. `steps` per turn; `p_accept` per drafted token; `delay` seconds per step."""

    read_only = False

    def __init__(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None, *,
                 steps: int = 12, p_accept: float = 0.75, seed: int = 0, delay: float = 0.0,
                 words: Sequence[str] = WORDS, title: str = "synthetic source", prepare_stages: int = 0,
                 prepare_delay: float = 0.0, max_new_tokens: int = 10**9) -> None:
        self.title = title
        self.settings = settings or PolicySettings()
        self.sampling = sampling or SamplingConfig()
        self.steps = steps
        self.p_accept = p_accept
        self.seed = seed
        self.delay = delay
        self.words = tuple(words)
        self.prepare_stages = prepare_stages
        self.prepare_delay = prepare_delay
        self.max_new_tokens = max_new_tokens
        self.turn = 0
        self.prepared = False
        self.requests: list[tuple[PolicySettings | None, SamplingConfig | None]] = []
        self._lock = threading.Lock()
        self._pending: tuple[PolicySettings | None, SamplingConfig | None] | None = None
        self._stop = threading.Event()
        self.gate: threading.Semaphore | None = None
        """If set, each step takes one permit first (tests release permits to let steps through)."""

    # -- EventSource -------------------------------------------------------------
    def prepare(self, progress: Progress) -> None:
        for i in range(self.prepare_stages):
            progress(f"stage {i + 1} of {self.prepare_stages}", i / max(1, self.prepare_stages))
            if self.prepare_delay:
                time.sleep(self.prepare_delay)
        progress("ready", 1.0)
        self.prepared = True

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        with self._lock:
            self.requests.append((settings, sampling))
            old = self._pending or (None, None)
            self._pending = (settings or old[0], sampling or old[1])

    def stop(self) -> None:
        self._stop.set()
        if self.gate is not None:
            self.gate.release()

    def events(self, prompt: str | None) -> Iterator[Event]:
        self._stop.clear()
        rng = random.Random(self.seed * 1000 + self.turn)
        prompt = prompt or ""
        pieces = [prompt[i:i + 4] for i in range(0, len(prompt), 4)]
        yield SessionHeader(
            target="synthetic-target", draft="synthetic-draft", tokenizer="synthetic", device="cpu",
            dtype="float32", method=self.settings.method, gamma0=self.settings.gamma0,
            params=self.settings.params.to_json(), sampling=self.sampling.to_json(), max_new_tokens=self.max_new_tokens,
            prompt_ids=list(range(len(pieces))), prompt=prompt, prompt_pieces=pieces, seed=self.seed,
            turn=self.turn, user_text=prompt,
        )
        self.turn += 1
        policy = self.settings.make()
        elapsed = 0.0
        tokens = drafted_total = accepted_total = 0
        reason = "max_new_tokens"
        w = 0
        steps = 0
        for step in range(self.steps):
            if self.gate is not None and not self.gate.acquire(timeout=30):
                reason = "stopped"
                break
            if self._stop.is_set():
                reason = "stopped"
                break
            changed = False
            with self._lock:
                pending, self._pending = self._pending, None
            if pending is not None:
                if pending[0] is not None:
                    self.settings = pending[0]
                    policy = self.settings.apply_to(policy)
                if pending[1] is not None:
                    self.sampling = pending[1]
                changed = True
            gamma = policy.gamma
            drafted: list[DraftedToken] = []
            early = False
            for i in range(gamma):
                top = round(0.3 + 0.7 * rng.random(), 3)
                chosen = top
                text = self.words[w % len(self.words)]
                w += 1
                p = round(min(1.0, chosen * (0.6 + 0.6 * rng.random())), 3)
                drafted.append(DraftedToken(id=w, text=text, top_prob=top, chosen_prob=chosen, target_prob=p))
                if not policy.keep_drafting(top, chosen):
                    early = len(drafted) < gamma
                    break
            a = 0
            while a < len(drafted) and rng.random() < self.p_accept:
                a += 1
            kind = "bonus" if a == len(drafted) else "correction"
            ttext = self.words[(w + 7) % len(self.words)]
            target = TargetToken(id=10_000 + step, text=ttext, kind=kind)
            emitted = [EmittedToken(d.id, d.text, "draft") for d in drafted[:a]] + [EmittedToken(target.id, ttext, "target")]
            policy.update(a, len(drafted))
            draft_s, verify_s = 0.001 * len(drafted), 0.004
            elapsed += draft_s + verify_s
            tokens += len(emitted)
            drafted_total += len(drafted)
            accepted_total += a
            yield StepEvent(
                step=step, method=policy.name, params=policy.describe(), gamma=gamma, drafted=drafted, accepted=a,
                target_token=target, emitted=emitted, gamma_next=policy.gamma, draft_s=draft_s, verify_s=verify_s,
                step_s=draft_s + verify_s, elapsed_s=round(elapsed, 6), early_stop=early, settings_changed=changed,
            )
            steps += 1
            if self.delay:
                time.sleep(self.delay)
            if tokens >= self.max_new_tokens:
                break
        yield SessionSummary(
            tokens=tokens, steps=steps, acceptance_rate=accepted_total / drafted_total if drafted_total else 0.0,
            tokens_per_step=tokens / steps if steps else 0.0, tokens_per_s=tokens / elapsed if elapsed else 0.0,
            stop_reason=reason, drafted=drafted_total, accepted=accepted_total, target_calls=steps,
            draft_calls=drafted_total, wall_s=elapsed,
        )


class ListSource:
    """Plays a fixed list of events (e.g. crafted hostile tokens); read-only unless told otherwise."""

    def __init__(self, events: Sequence[Event], *, title: str = "events", read_only: bool = False) -> None:
        self.title = title
        self.read_only = read_only
        self._events = list(events)
        self.requests: list = []
        self.stopped = False

    def prepare(self, progress: Progress) -> None:
        progress("ready", 1.0)

    def events(self, prompt: str | None) -> Iterator[Event]:
        yield from self._events

    def request(self, settings=None, sampling=None) -> None:
        self.requests.append((settings, sampling))

    def stop(self) -> None:
        self.stopped = True
