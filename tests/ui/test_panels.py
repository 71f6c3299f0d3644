"""Stats panel and confidence shading: the numbers of SPEC §5 and the slower-than-plain warning."""

from __future__ import annotations

from textual.app import App, ComposeResult

from gammatune_tui.engine.events import DraftedToken, EmittedToken, StepEvent, TargetToken
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


def test_warning_when_speculation_is_slower_than_plain():
    s = RunningStats()
    for i in range(10):          # slow drafts, nothing accepted: each step costs more than a plain pass
        s.add(_step(i, 4, 0, 0.040, 0.010))
    assert s.slower_than_plain
    text = " ".join(plain(render_stats(s)).split())
    assert "⚠ speculation is slower than plain target decoding" in text and "regime difficult" in text


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
