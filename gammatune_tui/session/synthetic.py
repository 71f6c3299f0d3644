"""Deterministic event streams without any model, for tests and screenshots.

A fixed token sequence stands for the target's greedy output and a fixed
per-position agreement/confidence pattern for the draft; the real policies
(`engine.policies`) decide γ and early stops, so every method produces the
same text in a different number of steps — what a lossless greedy compare
looks like — with a simple timing model (c = T_target / T_draft).
"""

from __future__ import annotations

import random
from typing import Iterator

from ..engine.events import DraftedToken, EmittedToken, Event, SessionHeader, SessionSummary, StepEvent, TargetToken
from ..engine.policies import PolicySettings

DEFAULT_TEXT = (
    "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n"
    "print([fibonacci(i) for i in range(10)])\n"
)


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


def synthetic_session(
    settings: PolicySettings | str = "gammatune+",
    *,
    text: str = DEFAULT_TEXT,
    prompt: str = "Write a Python function for Fibonacci numbers.",
    agreement: float = 0.75,
    seed: int = 0,
    t_draft: float = 0.002,
    c: float = 6.0,
    max_new_tokens: int | None = None,
    label: str = "",
    temperature: float = 0.0,
    stop_after_steps: int | None = None,
) -> list[Event]:
    """Header, steps and summary for one method over `text`."""
    if isinstance(settings, str):
        settings = PolicySettings.build(settings)
    pieces = _pieces(text)
    n_total = len(pieces) if max_new_tokens is None else min(len(pieces), max_new_tokens)
    rng = random.Random(seed)
    agree = [rng.random() < agreement for _ in range(len(pieces) + 64)]
    conf = [(0.55 + 0.45 * rng.random()) if a else 0.15 + 0.5 * rng.random() for a in agree]
    ids = {p: 10 + i for i, p in enumerate(dict.fromkeys(pieces))}
    policy = settings.make()
    params = settings.params.to_json()
    events: list[Event] = [SessionHeader(
        target="synthetic-target", draft="synthetic-draft", tokenizer="synthetic", device="cpu",
        dtype="float32", method=settings.method, gamma0=settings.gamma0, params=params,
        sampling={"temperature": temperature, "top_k": 0, "top_p": 1.0, "seed": seed},
        max_new_tokens=max_new_tokens or len(pieces), prompt_ids=[1, 2, 3], prompt=prompt,
        prompt_pieces=[prompt], seed=seed, demo=False, versions={"gammatune": "test"},
        label=label or settings.method,
    )]
    pos = 0
    step = 0
    elapsed = 0.0
    drafted_total = accepted_total = 0
    while pos < n_total and (stop_after_steps is None or step < stop_after_steps):
        room = n_total - pos - 1  # tokens the draft may propose: one is left for the target
        drafted: list[DraftedToken] = []
        early = False
        for j in range(min(policy.gamma, room)):
            k = pos + j
            ok = agree[k]
            piece = pieces[k] if ok else "~"
            top = conf[k]
            drafted.append(DraftedToken(ids.get(piece, 5), piece, top, top, target_prob=top if ok else 0.0))
            if not policy.keep_drafting(top, top):
                early = j + 1 < min(policy.gamma, room)
                break
        d = len(drafted)
        a = 0
        while a < d and agree[pos + a]:
            a += 1
        emitted = [EmittedToken(t.id, t.text, "draft") for t in drafted[:a]]
        tp = pieces[pos + a]
        kind = "bonus" if a == d else "correction"
        emitted.append(EmittedToken(ids[tp], tp, "target"))
        draft_s = d * t_draft
        verify_s = t_draft * c * (1 + 0.05 * d)
        elapsed += draft_s + verify_s
        gamma = policy.gamma
        if d:
            policy.update(a, d)
        events.append(StepEvent(
            step=step, method=settings.method, params=params, gamma=gamma, drafted=drafted,
            accepted=a, target_token=TargetToken(ids[tp], tp, kind), emitted=emitted,
            gamma_next=policy.gamma, draft_s=draft_s, verify_s=verify_s, step_s=draft_s + verify_s,
            elapsed_s=elapsed, early_stop=early,
        ))
        drafted_total += d
        accepted_total += a
        pos += len(emitted)
        step += 1
    stopped = stop_after_steps is not None and pos < n_total
    events.append(SessionSummary(
        tokens=pos, steps=step, acceptance_rate=accepted_total / drafted_total if drafted_total else 0.0,
        tokens_per_step=pos / step if step else 0.0, tokens_per_s=pos / elapsed if elapsed else 0.0,
        stop_reason="stopped" if stopped else ("max_new_tokens" if max_new_tokens else "eos"),
        drafted=drafted_total, accepted=accepted_total, target_calls=step, draft_calls=drafted_total,
        wall_s=elapsed, text="".join(pieces[:pos]),
    ))
    return events


class SyntheticDecoder:
    """Quacks like SpeculativeDecoder for compare tests: `generate()` and `stop()`."""

    def __init__(self, settings: PolicySettings, sampling=None, label: str = "", **kw):
        self.settings = settings
        self.label = label
        self.kw = kw
        self.stopped = False
        self.temperature = getattr(sampling, "temperature", 0.0) if sampling is not None else 0.0

    def generate(self, prompt, max_new_tokens: int = 128, **_: object) -> Iterator[Event]:
        yield from synthetic_session(self.settings, max_new_tokens=max_new_tokens, label=self.label,
                                     temperature=self.temperature, **self.kw)

    def stop(self) -> None:
        self.stopped = True
