"""The first answer's "vs plain" verdict is like for like (session/plain_speed.py): no prefill, no warm-up steps.

Plain's figure is the median of warm one-token steps. The first demo answer paid its prefill and slow first
steps on speculation's side only, and read "speculation ran slower" while its steady steps beat plain. The
step times here are given, not measured: the verdict depends on them alone.
"""

from __future__ import annotations

from gammatune_tui.engine.events import (DraftedToken, EmittedToken, SessionHeader, SessionSummary, StepEvent,
                                         TargetToken)
from gammatune_tui.session.plain_speed import JUDGED_STEPS, WARMUP_STEPS, PlainSpeed
from gammatune_tui.session.session_log import SessionLog

PLAIN = PlainSpeed(100.0, "greedy", "at load")   # 10 ms a token
PREFILL_S = 0.15


def _answer(step_times: list[float], tokens_per_step: int = 2, end: bool = True) -> SessionLog:
    """One chat answer as the source streams it: the header, steps with their own times and clocks run from the
    session's start (the prefill first), then the summary."""
    log = SessionLog()
    log.add(SessionHeader(target="demo/target", draft="demo/draft", tokenizer="t", device="cpu", dtype="float32",
                          method="costaware", gamma0=4, params={}, sampling={}, max_new_tokens=256, prompt_ids=[1],
                          prompt="Write a function", demo=True), plain=PLAIN)
    clock = PREFILL_S
    for i, step_s in enumerate(step_times):
        clock += step_s
        d = tokens_per_step - 1
        log.add(StepEvent(step=i, method="costaware", params={}, gamma=d,
                          drafted=[DraftedToken(k, "t", 0.9, 0.9, 0.9) for k in range(d)], accepted=d,
                          target_token=TargetToken(99, "x", "bonus"),
                          emitted=[EmittedToken(k, "t", "draft") for k in range(d)] + [EmittedToken(99, "x", "target")],
                          gamma_next=d, draft_s=step_s / 3, verify_s=step_s * 2 / 3, step_s=step_s, elapsed_s=clock))
    if end:
        n = tokens_per_step * len(step_times)
        log.add(SessionSummary(tokens=n, steps=len(step_times), acceptance_rate=1.0, tokens_per_step=tokens_per_step,
                               tokens_per_s=n / clock, stop_reason="max_new_tokens"))
    return log


def test_the_first_answer_faster_in_its_steady_state_is_not_called_slower():
    # three warm-up steps at 60 ms, then 30 steps of 2 tokens in 16 ms: 125 tok/s against plain's 100
    stats = _answer([0.060] * 3 + [0.016] * 30).current
    assert stats.tokens_per_s < PLAIN.tokens_per_s          # prefill and warm-up in: 66/0.81 s = 81 tok/s
    v = stats.speed_verdict
    assert not v.slower and v.warning() == ""
    assert round(v.tokens_per_s) == 125 and v.window == "this answer, steps 4-33 (no prefill)"
    assert v.figures().startswith("1.25× — this answer, steps 4-33 (no prefill) 125 tok/s · plain 100 tok/s")


def test_speculation_slower_in_its_steady_state_still_says_so():
    stats = _answer([0.060] * 3 + [0.025] * 30).current     # 80 tok/s past the warm-up
    v = stats.speed_verdict
    assert v.slower and v.warning() == "⚠ this answer, steps 4-33 (no prefill): speculation ran slower than plain " \
                                       "target decoding"


def test_an_answer_too_short_to_judge_says_so_without_a_warning():
    stats = _answer([0.060] * 3 + [0.050] * (JUDGED_STEPS - 1)).current   # slow, but one steady step short
    v = stats.speed_verdict
    assert not v.slower and v.warning() == ""
    assert v.figures() == (f"too short to judge — this answer {WARMUP_STEPS + JUDGED_STEPS - 1} steps, the first "
                           f"{WARMUP_STEPS} warming up · plain 100 tok/s (greedy, measured at load)")


def test_while_streaming_the_rolling_window_waits_for_the_warm_up_to_leave_it():
    early = _answer([0.060] * 3 + [0.016] * 5, end=False).current
    assert not early.speed_verdict.judged and "so far 8 steps" in early.speed_verdict.figures()
    later = _answer([0.060] * 3 + [0.016] * JUDGED_STEPS, end=False).current
    v = later.speed_verdict
    assert v.judged and not v.slower and v.window == f"last {JUDGED_STEPS} steps (no prefill)"
