"""Notifications never cover the prompt or the step inspector (issue 24: at 80×24 the "Loaded" and pace toasts did),
and no "Loaded" notice covers the welcome text (issue 40 row 13)."""

from __future__ import annotations

from gammatune_tui.ui.textual_compat import Toast

from gammatune_tui.engine.loading.load_stages import load_stages_text

from uihelpers import SyntheticSource, make_app, run, wait_until

STAGES = {"imports": 4.1, "tokenizer": 0.3, "weights": 2.0, "self-checks": 2.9, "warm-up": 0.8}


def test_the_loaded_and_pace_notices_leave_the_prompt_and_inspector_free():
    async def scenario(size):
        source = SyntheticSource(steps=3)
        source.title = f"HuggingFaceTB/SmolLM2-135M-Instruct + prompt lookup · static runner · {load_stages_text(STAGES)}"
        source.pace = 0.0
        source.set_pace = lambda p: setattr(source, "pace", p)
        app = make_app(source)
        async with app.run_test(size=size, notifications=True) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await pilot.pause(0.3)
            # no "Loaded" notice over the welcome text for 8 s at 80×24 (issue 40 row 13): its stages are a line there
            welcome = chat.query_one("#welcome").region
            assert welcome.height > 0 and not any(t.region.overlaps(welcome) for t in app.screen.query(Toast))
            await pilot.press("f9")   # a pace notice
            await wait_until(pilot, lambda: len(list(app.screen.query(Toast))) >= 1, what="the pace notice")
            await pilot.pause(0.3)
            toasts = [t.region for t in app.screen.query(Toast)]
            for widget in (chat.query_one("#prompt"), chat.inspector):
                assert widget.region.height > 0
                assert not any(t.overlaps(widget.region) for t in toasts), (size, toasts, widget.region)

    for size in ((80, 24), (160, 48)):
        run(scenario(size))
