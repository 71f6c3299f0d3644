"""What the copy keys put on the clipboard: answers without the end-of-turn token, and nothing else lost."""

from __future__ import annotations

from gammatune_tui.engine.events import EmittedToken, SessionSummary, StepEvent, TargetToken
from gammatune_tui.render.plain_text import answer_text


def _steps(*texts: str) -> list[StepEvent]:
    return [StepEvent(step=i, method="specdecode", params={}, gamma=1, drafted=[], accepted=0,
                      target_token=TargetToken(i, t, "bonus"), emitted=[EmittedToken(i, t, "target")],
                      gamma_next=1, draft_s=0.0, verify_s=0.0) for i, t in enumerate(texts)]


def _summary(reason: str) -> SessionSummary:
    return SessionSummary(tokens=3, steps=3, acceptance_rate=0.0, tokens_per_step=1.0, tokens_per_s=1.0,
                          stop_reason=reason)


def test_the_end_of_turn_token_is_dropped_and_only_it():
    for eot in ("<|im_end|>", "</s>", "<eos>", "<|eos|>", "[EOS]", ""):
        assert answer_text(_steps("Hello", " world", eot), _summary("eos")) == "Hello world", eot
    # ended for lack of text, or by the budget: the last word is the answer's
    assert answer_text(_steps("Hello", " world", "."), _summary("eos")) == "Hello world."
    assert answer_text(_steps("a", "b", "</s>"), _summary("max_new_tokens")) == "ab</s>"
    # control characters never reach the clipboard raw
    assert answer_text(_steps("a\x1b[31m", "b"), None) == "a\\x1b[31mb"
