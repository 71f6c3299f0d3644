"""Stats panel and confidence shading: the numbers of docs/spec.md §5 and the slower-than-plain warning."""

from __future__ import annotations

from textual.app import App, ComposeResult

from gammatune_tui.engine.events import DraftedToken, EmittedToken, SessionSummary, StepEvent, TargetToken
from gammatune_tui.session.plain_speed import PlainSpeed
from gammatune_tui.session.stats import RunningStats
from gammatune_tui.ui.widgets.stats_panel import render_stats
from gammatune_tui.ui.widgets.token_stream import TokenStream

from uihelpers import plain, run


def _step(i, drafted, accepted, draft_s, verify_s):
    d = [DraftedToken(k, "t", 0.9, 0.9, 0.9) for k in range(drafted)]
    em = [EmittedToken(k, "t", "draft") for k in range(accepted)] + [EmittedToken(99, "x", "target")]
    return StepEvent(step=i, method="specdecode", params={}, gamma=drafted, drafted=d, accepted=accepted,
                     target_token=TargetToken(99, "x", "correction" if accepted < drafted else "bonus"),
                     emitted=em, gamma_next=drafted, draft_s=draft_s, verify_s=verify_s)


def test_stats_show_spec_metrics():
    s = RunningStats()
    for i in range(10):
        s.add(_step(i, 4, 3, 0.004, 0.010))
    text = " ".join(plain(render_stats(s)).split())
    assert "tokens/s 285.7 (40 tokens, 10 steps)" in text          # 40 tokens in 10 × 14 ms
    assert "α 0.75" in text and "tokens/step 4.00" in text
    assert "target 10 · draft 40" in text and "c 10.0" in text
    assert "per position 1.00 1.00 1.00 0.00" in text and "regime easy" in text
    assert "modeled" in text and "measured" in text
    assert "slower than plain" not in text


def test_no_speed_verdict_without_a_measured_plain_speed():
    """The old warning priced a plain token at one verify pass of several tokens: a figure nothing measured."""
    s = RunningStats()
    for i in range(10):          # slow drafts, nothing accepted
        s.add(_step(i, 4, 0, 0.040, 0.010))
    assert s.speed_verdict is None
    text = " ".join(plain(render_stats(s)).split())
    assert "plain" not in text and "⚠" not in text and "regime difficult" in text


def _measured(tok_s: float) -> PlainSpeed:
    return PlainSpeed(tok_s, "T 0.7", "at load")


def test_the_verdict_names_its_window_and_agrees_with_its_figures():
    s = RunningStats(plain=_measured(241.0))
    for i in range(13):          # 4 tokens a step in 14 ms: 285.7 tok/s (3 warm-up steps, then a window of 10)
        s.add(_step(i, 4, 3, 0.004, 0.010))
    v = s.speed_verdict
    assert not v.slower and v.window == "last 10 steps (no prefill)"
    text = " ".join(plain(render_stats(s)).split())
    assert "vs plain 1.19× — last 10 steps (no prefill) 286 tok/s · plain 241 tok/s (T 0.7, measured at load)" in text
    assert "⚠" not in text and "slower" not in text

    # the case: 196.5 tok/s beside plain 241 is slower, and the warning says so over its window
    s = RunningStats(plain=_measured(241.0))
    for i in range(13):
        s.add(_step(i, 4, 0, 0.00309, 0.002))   # 1 token in 5.09 ms: 196.5 tok/s
    text = " ".join(plain(render_stats(s)).split())
    assert "tokens/s 196.5" in text and "vs plain 0.82× — last 10 steps (no prefill) 196 tok/s · plain 241 tok/s" in text
    assert "⚠ last 10 steps (no prefill): speculation ran slower than plain target decoding" in text


def test_after_the_answer_the_verdict_covers_the_answer_and_uses_its_tokens_per_s():
    s = RunningStats(plain=_measured(300.0))
    for i in range(13):
        s.add(_step(i, 4, 3, 0.004, 0.010))
    s.add(SessionSummary(tokens=52, steps=13, acceptance_rate=0.75, tokens_per_step=4.0, tokens_per_s=285.7,
                         stop_reason="eos"))
    text = " ".join(plain(render_stats(s)).split())
    assert "tokens/s 285.7" in text
    assert "vs plain 0.95× — this answer, steps 4-13 (no prefill) 286 tok/s · plain 300 tok/s (T 0.7, measured at load)" in text
    assert "⚠ this answer, steps 4-13 (no prefill): speculation ran slower than plain target decoding" in text
    assert "last 10 steps 2" not in text   # the streaming window is not left up once the answer ended


def test_confidence_shading_dims_unsure_draft_tokens():
    class A(App):
        def compose(self) -> ComposeResult:
            yield TokenStream()

    async def scenario():
        app = A()
        async with app.run_test(size=(60, 8)) as pilot:
            ts = app.query_one(TokenStream)
            ts.append("sure", "draft", 0, 0.99)
            ts.append("unsure", "draft", 0, 0.05)
            await pilot.pause()
            colours = lambda: [seg.style.color for seg in ts.render_line(0) if seg.text in ("sure", "unsure")]
            plain_sure, plain_unsure = colours()
            assert plain_sure == plain_unsure
            ts.shade = True
            await pilot.pause()
            shaded_sure, shaded_unsure = colours()
            assert shaded_sure != shaded_unsure
            bg = ts._bg
            from textual.color import Color
            dist = lambda c: sum(abs(a - b) for a, b in zip(Color.parse(bg).rgb, c.triplet))
            assert dist(shaded_unsure) < dist(shaded_sure)     # the unsure token is closer to the background

    run(scenario())


def test_stats_tell_planned_from_drafted_when_a_threshold_stops_windows_early():
    s = RunningStats()
    for i in range(10):   # γ holds at 4; every other window stops after 1 token
        ev = _step(i, 4 if i % 2 else 1, 1, 0.004, 0.010)
        s.add(StepEvent(**{**ev.__dict__, "gamma": 4}))
    text = " ".join(plain(render_stats(s)).split())
    assert "mean γ 4.00 planned, 2.50 drafted" in text


def test_the_two_speeds_of_a_streaming_answer_say_what_each_counts():
    """tokens/s counts the answer's time from the prompt on (prefill included); the verdict's window only the
    steps' own time, and says so: unlabelled, 147.5 and 172 tok/s for the same 9 steps read as a contradiction."""
    import dataclasses

    s = RunningStats(plain=_measured(150.0))
    for i in range(13):   # 19 tokens; each step's own time 0.0097 s, and 0.015 s of prefill before the first
        ev = _step(i, 1, 1 if i < 6 else 0, 0.002, 0.0077)
        s.add(dataclasses.replace(ev, elapsed_s=0.015 + 0.0097 * (i + 1)))
    text = " ".join(plain(render_stats(s)).split())
    assert f"tokens/s {s.tokens_per_s:,.1f} ({s.tokens} tokens, 13 steps)" in text
    assert f"last 10 steps (no prefill) {s.recent_tokens_per_s:,.0f} tok/s" in text
    assert round(s.tokens_per_s) != round(s.recent_tokens_per_s)
