"""What a session reports: its header, the token lists of each step, and the running totals.

Kept apart from the step loop so the loop reads as draft → verify → accept →
rewind, while every field of the event contract (events.py) is filled here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from .acceptance import count_step, position_rates
from .events import DraftedToken, EmittedToken, SessionHeader, SessionSummary, TargetToken
from .policies import Policy
from .sampling import SamplingConfig
from .text_pieces import SingleTokenText, TextPieces, prompt_pieces

_VERSIONS: dict[str, str] | None = None


def versions() -> dict[str, str]:
    """torch / transformers / gammatune versions, looked up once per process."""
    global _VERSIONS
    if _VERSIONS is None:
        import transformers

        from .. import __version__ as own
        _VERSIONS = {"torch": torch.__version__, "transformers": transformers.__version__, "gammatune": own}
    return dict(_VERSIONS)


def session_header(
    pair: Any, policy: Policy, sampling: SamplingConfig, device: torch.device, max_new: int,
    prompt_ids: Sequence[int], *, label: str, turn: int, user_text: str | None, engine: str = "",
    runner: str = "", warmup_s: float = 0.0,
) -> SessionHeader:
    """Everything a replay needs to show (and a reader to trust) about how the session was run."""
    tok = pair.tokenizer
    target, draft = pair.target, pair.draft
    return SessionHeader(
        target=str(getattr(pair, "name_target", "") or getattr(target.config, "_name_or_path", "")),
        draft=str(getattr(pair, "name_draft", "") or getattr(draft.config, "_name_or_path", "")),
        tokenizer=str(getattr(tok, "name_or_path", "")),
        device=str(device),
        dtype=str(getattr(pair, "dtype", target.dtype)).replace("torch.", ""),
        method=policy.name,
        gamma0=policy.gamma0,
        params=policy.describe(),
        sampling=sampling.to_json(),
        max_new_tokens=max_new,
        prompt_ids=list(prompt_ids),
        prompt=tok.decode(prompt_ids),
        prompt_pieces=prompt_pieces(tok, prompt_ids),
        seed=sampling.seed,
        demo=bool(getattr(pair, "is_demo", False)),
        versions=versions(),
        created=time.time(),
        label=label,
        turn=turn,
        user_text=user_text if user_text is not None else "",
        engine=engine,
        runner=runner,
        warmup_s=warmup_s,
    )


def token_events(
    new: list[int], drafted: list[int], draft_top: list[float], draft_chosen: list[float],
    target_probs: list[float], accepted: int, kind: str, *, pieces: TextPieces, single: SingleTokenText,
    finished: bool,
) -> tuple[list[EmittedToken], list[DraftedToken], TargetToken | None]:
    """The step's emitted, drafted and target tokens; the last step flushes any held-back text."""
    texts = [pieces.push(t) for t in new]
    if finished and texts:
        texts[-1] += pieces.flush()
    emitted = [
        EmittedToken(tid, txt, "draft" if i < accepted else "target")
        for i, (tid, txt) in enumerate(zip(new, texts))
    ]
    drafted_ev = [
        DraftedToken(drafted[i], single(drafted[i]), draft_top[i], draft_chosen[i], target_probs[i])
        for i in range(len(drafted))
    ]
    # the budget or an EOS among the drafts can cut the target's own token off
    has_target = len(new) == accepted + 1
    target_ev = TargetToken(new[accepted], texts[accepted], kind) if has_target else None
    return emitted, drafted_ev, target_ev


@dataclass
class SessionTally:
    """Totals for the SessionSummary, counted as the steps go."""

    steps: int = 0
    drafted: int = 0
    accepted: int = 0
    target_calls: int = 0
    draft_calls: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0
    pos_drafted: list[int] = field(default_factory=list)
    pos_accepted: list[int] = field(default_factory=list)

    def add_step(self, drafted: int, accepted: int, draft_calls: int, draft_s: float, verify_s: float) -> None:
        self.steps += 1
        self.target_calls += 1
        self.draft_calls += draft_calls
        self.drafted += drafted
        self.accepted += accepted
        self.draft_s += draft_s
        self.verify_s += verify_s
        count_step(self.pos_drafted, self.pos_accepted, drafted, accepted)

    def summary(self, generated: int, wall: float, stop_reason: str, text: str) -> SessionSummary:
        return SessionSummary(
            tokens=generated, steps=self.steps,
            acceptance_rate=(self.accepted / self.drafted) if self.drafted else 0.0,
            tokens_per_step=(generated / self.steps) if self.steps else 0.0,
            tokens_per_s=(generated / wall) if wall > 0 else 0.0,
            stop_reason=stop_reason, drafted=self.drafted, accepted=self.accepted,
            target_calls=self.target_calls, draft_calls=self.draft_calls, wall_s=wall,
            draft_s=self.draft_s, verify_s=self.verify_s,
            per_position=position_rates(self.pos_drafted, self.pos_accepted),
            text=text,
        )


__all__ = ["versions", "session_header", "token_events", "SessionTally"]
