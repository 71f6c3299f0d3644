"""The one model-free speculative decoder: deterministic event streams for tests, screenshots and benchmarks.

A fixed text stands for the target's greedy output and a seeded
per-position agreement and confidence pattern for the draft (a token of
confidence c stands for a two-way law (c, 1 − c): its entropy is that
law's); the real
policies (`engine.policies`) plan γ and decide early stops, so every method
produces the same text in a different number of steps — what a lossless
greedy compare looks like — with a simple timing model (c = T_target / T_draft).

`SyntheticSource` plays both parts a model pair plays: an `EventSource` for
the chat screen (`events(prompt)`, with `request()` and `stop()` acting at
the next step boundary as the live source does, and `set_pace()` holding
it to a number of steps per second) and a decoder for compare
(`generate(prompt, max_new_tokens)`). `synthetic_session()` is one session
as a list.
"""

from __future__ import annotations

import math
import random
import threading
import time
from typing import Any, Iterator, Sequence

from ..engine.events import DraftedToken, EmittedToken, Event, SessionHeader, StepEvent, StopReason, TargetToken
from ..engine.mailbox import SettingsMailbox
from ..engine.policies import PolicySettings
from ..engine.policies.policy_base import TokenStats
from ..engine.policies.step_rule import cut_window, plan_window, settle_step
from ..engine.common.sampling import SamplingConfig
from ..engine.events.tally import SessionTally
from .pace import StepPacer, check_pace
from .source import Progress

DEFAULT_TEXT = (
    "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n"
    "print([fibonacci(i) for i in range(10)])\n"
)
DEFAULT_PROMPT = "Write a Python function for Fibonacci numbers."


def _pieces(text: str) -> list[str]:
    out, cur = [], ""
    for ch in text:
        cur += ch
        if ch in " \n()[]:,=+" or len(cur) >= 4:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


class _Draft:
    """Whether the draft agrees with the target at each position, and how sure it is; drawn in seeded blocks."""

    def __init__(self, rng: random.Random, agreement: float, block: int) -> None:
        self.rng, self.agreement, self.block = rng, agreement, block
        self.agree: list[bool] = []
        self.conf: list[float] = []

    def at(self, k: int) -> tuple[bool, float]:
        while k >= len(self.agree):
            rng = self.rng
            agree = [rng.random() < self.agreement for _ in range(self.block)]
            self.conf += [(0.55 + 0.45 * rng.random()) if a else 0.15 + 0.5 * rng.random() for a in agree]
            self.agree += agree
        return self.agree[k], self.conf[k]


class SyntheticSource:
    """A fake model pair over `text` (see the module docstring).

    `steps`: end each session after that many steps (the text repeats as
    needed, stop reason "max_new_tokens"); None: a session is the text once
    (stop reason "eos"). `max_new_tokens` caps the tokens as the decoder's
    budget does. `gate`: when set, each step first takes one permit (tests
    release permits to let steps through). `delay`: seconds slept per step.
    """

    read_only = False
    hindsight = None          # no models: no oracle check, no plain decoding timed
    plain_speed = None
    has_next_session = False  # a chat: each session starts from a prompt

    def __init__(self, settings: PolicySettings | str | None = None, sampling: SamplingConfig | None = None, *,
                 text: str = DEFAULT_TEXT, prompt: str = DEFAULT_PROMPT, agreement: float = 0.75, seed: int = 0,
                 t_draft: float = 0.002, c: float = 6.0, steps: int | None = None,
                 max_new_tokens: int | None = None, label: str = "", title: str = "synthetic source",
                 delay: float = 0.0, prepare_stages: int = 0, prepare_delay: float = 0.0,
                 pace: float = 0.0) -> None:
        if isinstance(settings, str):
            settings = PolicySettings.build(settings)
        self.settings = settings or PolicySettings()
        self.sampling = sampling or SamplingConfig(seed=seed)
        self.text, self.prompt = text, prompt
        self.agreement, self.seed = agreement, seed
        self.t_draft, self.c = t_draft, c
        self.steps, self.max_new_tokens = steps, max_new_tokens
        self.label, self.title = label, title
        self.delay = delay
        self.prepare_stages, self.prepare_delay = prepare_stages, prepare_delay
        self.turn = 0
        self.requests: list[tuple[PolicySettings | None, SamplingConfig | None]] = []
        self.gate: threading.Semaphore | None = None
        self._lock = threading.Lock()   # the settings and their record change together
        self._mailbox = SettingsMailbox()
        self._stop = threading.Event()
        self.pace = check_pace(pace)
        self.pacer = StepPacer(self.pace)

    # -- EventSource ---------------------------------------------------------------------
    def prepare(self, progress: Progress) -> None:
        for i in range(self.prepare_stages):
            progress(f"stage {i + 1} of {self.prepare_stages}", i / max(1, self.prepare_stages))
            if self.prepare_delay:
                time.sleep(self.prepare_delay)
        progress("ready", 1.0)

    def events(self, prompt: str | None) -> Iterator[Event]:
        """One chat turn (`prompt` None: nothing, as for a live source)."""
        if prompt is None:
            return
        turn, self.turn = self.turn, self.turn + 1
        self.pacer.begin()
        for ev in self.generate(prompt, user_text=prompt, turn=turn):
            yield ev
            if isinstance(ev, StepEvent):
                self.pacer.wait()

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        with self._lock:
            self.requests.append((settings, sampling))
            self.settings = settings or self.settings
            self.sampling = sampling or self.sampling
            self._mailbox.put(settings, sampling)

    def stop(self) -> None:
        self._stop.set()
        self.pacer.interrupt()
        if self.gate is not None:
            self.gate.release()

    def set_pace(self, steps_per_s: float) -> None:
        self.pace = check_pace(steps_per_s)
        self.pacer.set(self.pace)

    def close(self) -> None:
        """Nothing to let go of."""

    # -- the decoder's part ------------------------------------------------------------
    def generate(self, prompt: str | Sequence[int] | Sequence[dict] | None = None, max_new_tokens: int | None = None, *, user_text: str | None = None,
                 turn: int = 0) -> Iterator[Event]:
        """Header, steps and summary of one session, as `SpeculativeDecoder.generate` yields them."""
        self._stop.clear()
        with self._lock:   # settings asked for between sessions are this session's from the start
            self._mailbox.take()
            settings, sampling = self.settings, self.sampling
        text = user_text if user_text is not None else _prompt_text(prompt, self.prompt)
        pieces = _pieces(self.text)
        budget = max_new_tokens if max_new_tokens is not None else self.max_new_tokens
        repeat = self.steps is not None and bool(pieces)
        limit = budget if repeat else min(len(pieces), len(pieces) if budget is None else budget)
        rng = random.Random(self.seed + 1_000_003 * turn)
        draft = _Draft(rng, self.agreement, len(pieces) + 64)
        ids = {p: 10 + i for i, p in enumerate(dict.fromkeys(pieces))}
        policy = settings.make()
        yield SessionHeader(
            target="synthetic-target", draft="synthetic-draft", tokenizer="synthetic", device="cpu",
            dtype="float32", method=settings.method, gamma0=settings.gamma0, params=settings.params.to_json(),
            sampling=sampling.to_json(), max_new_tokens=limit if limit is not None else 0,
            prompt_ids=list(range(1, len(_pieces(text)) + 1)), prompt=text, prompt_pieces=_pieces(text),
            seed=sampling.seed, versions={"gammatune": "test"}, label=self.label,
            turn=turn, user_text=text,
        )
        tally = SessionTally()
        pos = 0
        elapsed = 0.0
        reason: StopReason = "eos"
        while True:
            if limit is not None and pos >= limit:
                reason = "max_new_tokens" if repeat or limit < len(pieces) else "eos"
                break
            if repeat and self.steps is not None and tally.steps >= self.steps:
                reason = "max_new_tokens"
                break
            if self.gate is not None and not self.gate.acquire(timeout=30):
                reason = "stopped"
                break
            if self._stop.is_set():
                reason = "stopped"
                break
            changed = False
            sampling_now: dict = {}
            pending = self._mailbox.take()
            if pending is not None:
                if pending[0] is not None:
                    policy = pending[0].apply_to(policy)
                if pending[1] is not None:
                    sampling_now = pending[1].to_json()
                changed = True
            gamma, method, params = policy.gamma, policy.name, policy.describe()
            window = plan_window(gamma, None if limit is None else limit - pos)   # one token is left for the target
            # the window's proposal is known at once: the text's piece where the draft agrees, "~" where it does not
            drafted: list[DraftedToken] = []
            stats: list[TokenStats] = []
            for j in range(window):
                ok, top = draft.at(pos + j)
                piece = pieces[(pos + j) % len(pieces)] if ok else "~"
                entropy = _two_way_entropy(top)
                drafted.append(DraftedToken(ids.get(piece, 5), piece, top, top, target_prob=top if ok else 0.0,
                                            entropy=entropy))
                stats.append(TokenStats(top, top, entropy))
            d, early = cut_window([t.id for t in drafted], stats, window, policy, _NO_EOS)
            del drafted[d:], stats[d:]
            a = 0
            while a < d and draft.at(pos + a)[0]:
                a += 1
            tp = pieces[(pos + a) % len(pieces)]
            emitted = [EmittedToken(t.id, t.text, "draft") for t in drafted[:a]]
            emitted.append(EmittedToken(ids[tp], tp, "target"))
            draft_s = d * self.t_draft
            verify_s = self.t_draft * self.c * (1 + 0.05 * d)
            elapsed += draft_s + verify_s
            settle_step(policy, window=window, drafted=d, accepted=a, stats=stats, run=[t.id for t in emitted],
                        eos=_NO_EOS, generated=pos, max_new=limit, costs=(draft_s, d, verify_s, d + 1))
            tally.add_step(d, a, d, draft_s, verify_s)
            yield StepEvent(
                step=tally.steps - 1, method=method, params=params, gamma=gamma, drafted=drafted, accepted=a,
                target_token=TargetToken(ids[tp], tp, "bonus" if a == d else "correction"), emitted=emitted,
                gamma_next=policy.gamma, draft_s=draft_s, verify_s=verify_s, step_s=draft_s + verify_s,
                elapsed_s=elapsed, early_stop=early, settings_changed=changed, sampling=sampling_now,
            )
            pos += len(emitted)
            if self.delay:
                time.sleep(self.delay)
        out = "".join(pieces[k % len(pieces)] for k in range(pos)) if pieces else ""
        yield tally.summary(pos, elapsed, reason, out)


_NO_EOS: frozenset[int] = frozenset()   # the text's end, not a token, ends a synthetic session


def _two_way_entropy(c: float) -> float:
    """H of the law (c, 1 − c) in nats: what a synthetic token of confidence c stands for."""
    return -sum(p * math.log(p) for p in (c, 1.0 - c) if p > 0)


def _prompt_text(prompt: str | Sequence[int] | Sequence[dict] | None, default: str) -> str:
    """The user's text of a decoder prompt: raw text, or the last user message of a chat."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and prompt and isinstance(prompt[-1], dict):
        return str(prompt[-1].get("content", default))
    return default


def synthetic_session(settings: PolicySettings | str = "gammatune+", **kwargs: Any) -> list[Event]:
    """One session for `settings` over the text (keyword arguments as for `SyntheticSource`), labelled by method."""
    source = SyntheticSource(settings, **kwargs)
    source.label = source.label or source.settings.method
    return list(source.generate(source.prompt))
