"""What a session reports: its header and the token lists of each step.

Kept apart from the step loop so the loop reads as draft → verify → accept →
rewind, while every field of the event contract (events/__init__.py) is filled here
(the running totals are tally.py's).
"""

from __future__ import annotations

import time
from typing import Any, Protocol, Sequence, cast

import torch

from ..common.pair import ModelPair
from . import DraftedToken, EmittedToken, SessionHeader, TargetKind, TargetToken
from ..policies.policy_base import Policy, TokenStats
from ..common.sampling import SamplingConfig
from .text_pieces import SingleTokenText, TextPieces, prompt_pieces


class DraftSource(Protocol):
    """What a header records of the draft source (drafting/ `DrafterSettings`; events/ sits below drafting/)."""

    @property
    def name(self) -> str: ...

    def params(self) -> dict[str, Any]: ...

_VERSIONS: dict[str, str] | None = None


def versions() -> dict[str, str]:
    """torch / transformers / gammatune versions, looked up once per process."""
    global _VERSIONS
    if _VERSIONS is None:
        import transformers

        from ... import __version__ as own
        _VERSIONS = {"torch": torch.__version__, "transformers": transformers.__version__, "gammatune": own}
    return dict(_VERSIONS)


def session_header(
    pair: ModelPair, policy: Policy, sampling: SamplingConfig, device: torch.device, max_new: int,
    prompt_ids: Sequence[int], *, label: str, turn: int, user_text: str | None, engine: str = "",
    runner: str = "", warmup_s: float = 0.0, drafter: DraftSource | None = None,
) -> SessionHeader:
    """Everything a replay needs to show (and a reader to trust) about how the session was run.

    `drafter` (a DrafterSettings) names the draft source; `draft` is the draft
    model's name, or the source's name ("prompt-lookup") when no model drafts.
    """
    tok = pair.tokenizer
    target, draft = pair.target, pair.draft
    name = getattr(drafter, "name", "model")
    if name != "model":
        draft_name = name
    else:
        draft_name = str(pair.name_draft or (getattr(draft.config, "_name_or_path", "") if draft is not None else ""))
    return SessionHeader(
        target=str(pair.name_target or getattr(target.config, "_name_or_path", "")),
        draft=draft_name,
        # the pair's tokenizer is the target's: named as the target is (`demo/target`, a hub id, the path as
        # typed), not by the absolute path it was read from, which says nothing on another machine
        tokenizer=str(pair.name_target or getattr(tok, "name_or_path", "")),
        device=str(device),
        dtype=str(pair.dtype).replace("torch.", ""),
        method=policy.name,
        gamma0=policy.gamma0,
        params=policy.describe(),
        sampling=sampling.to_json(),
        max_new_tokens=max_new,
        prompt_ids=list(prompt_ids),
        prompt=cast(str, tok.decode(list(prompt_ids))),   # one sequence of ids decodes to one text
        prompt_pieces=prompt_pieces(tok, prompt_ids),
        seed=sampling.seed,
        demo=bool(pair.is_demo),
        versions=versions(),
        created=time.time(),
        label=label,
        turn=turn,
        user_text=user_text if user_text is not None else "",
        engine=engine,
        runner=runner,
        warmup_s=warmup_s,
        load_s=dict(pair.load_s or {}),
        drafter=name,
        drafter_params=drafter.params() if drafter is not None else {},
        end_ids=sorted(int(i) for i in (pair.eos_ids or ())),
        **_precisions(pair, drafts=name == "model"),
    )


def _precisions(pair: ModelPair, drafts: bool) -> dict[str, Any]:
    """Each model's precision and weight bytes as the header records them (no draft model drafting: the target's)."""
    models = pair.models()
    out: dict[str, Any] = {"target_precision": models["target"]["precision"], "target_bytes": models["target"]["bytes"]}
    if drafts and "draft" in models:
        out.update(draft_precision=models["draft"]["precision"], draft_bytes=models["draft"]["bytes"])
    return out


def token_events(
    new: list[int], drafted: list[int], stats: Sequence[TokenStats],
    target_probs: list[float], accepted: int, kind: TargetKind, *, pieces: TextPieces, single: SingleTokenText,
    finished: bool, point_mass: bool = False,
) -> tuple[list[EmittedToken], list[DraftedToken], TargetToken | None]:
    """The step's emitted, drafted and target tokens; the last step flushes any held-back text.

    `point_mass`: the proposal law was a point mass (a model-free source), so each drafted
    token's q(x) is 1 whatever its stand-in probabilities say.
    """
    texts = [pieces.push(t) for t in new]
    if finished and texts:
        texts[-1] += pieces.flush()
    emitted = [
        EmittedToken(tid, txt, "draft" if i < accepted else "target")
        for i, (tid, txt) in enumerate(zip(new, texts))
    ]
    q = 1.0 if point_mass else None
    drafted_ev = [
        DraftedToken(drafted[i], single(drafted[i]), stats[i].top, stats[i].chosen, target_probs[i], q,
                     stats[i].entropy)
        for i in range(len(drafted))
    ]
    # the budget or an EOS among the drafts can cut the target's own token off
    has_target = len(new) == accepted + 1
    target_ev = TargetToken(new[accepted], texts[accepted], kind) if has_target else None
    return emitted, drafted_ev, target_ev


__all__ = ["versions", "session_header", "token_events"]
