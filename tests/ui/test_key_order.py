"""Keys typed in a burst act in the order they were typed: Tab, a field's own keys, then the characters.

In a control field, Tab then Ctrl+A Ctrl+K and a value typed within ~0.4 s
lost the value (issue 40 row 13): a non-priority key ran its binding only once
it had bubbled back to the app, so the keys queued behind Tab went to the
field left behind, and in the field "Ctrl+A Ctrl+K 3 Enter" ran as "3, home,
delete to the end, submit" and sent nothing. Posting the keys to the app
together is what a terminal does when the app is busy: they queue up.
"""

from __future__ import annotations

from textual import events

from uihelpers import SyntheticSource, make_app, run, wait_until


def _burst(app, *keys: str) -> None:
    """Queue `keys` at once, as a terminal delivers them while the app is busy."""
    for k in keys:
        app.post_message(events.Key(k, k if len(k) == 1 else None))


def test_a_value_typed_right_after_tab_into_a_control_field_is_applied():
    async def scenario(size):
        src = SyntheticSource(steps=3)
        app = make_app(src)
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await pilot.press("tab")   # prompt → method (at 80×24 the panels take the screen)
            await wait_until(pilot, lambda: app.focused is chat.query_one("#ctl-method"), what="the method")
            await pilot.pause(0.2)
            _burst(app, "tab", "ctrl+a", "ctrl+k", "3", "enter")
            gamma0 = chat.query_one("#ctl-gamma0")
            await wait_until(pilot, lambda: chat.controls.settings.gamma0 == 3, timeout=5, what=f"γ0 3 at {size}")
            assert app.focused is gamma0 and gamma0.value == "3"
            assert chat.controls.error_for("gamma0") == ""
            # ↑ is the field's own key too: in turn with what is typed around it
            _burst(app, "ctrl+a", "ctrl+k", "5", "up")
            await wait_until(pilot, lambda: chat.controls.settings.gamma0 == 6, timeout=5, what="γ0 6")
            assert gamma0.value == "6"

    for size in ((80, 24), (160, 45)):
        run(scenario(size))


def test_editing_keys_in_a_burst_act_in_order_in_the_prompt():
    async def scenario():
        app = make_app(SyntheticSource(steps=3))
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt")
            await wait_until(pilot, lambda: chat.ready and app.focused is prompt, what="the prompt")
            _burst(app, *"draft", "ctrl+a", "ctrl+k", *"hi")
            await wait_until(pilot, lambda: prompt.value in ("hi", "drafthi", "hidraft") and prompt.value != "draft",
                             timeout=5, what="the typed text")
            await pilot.pause(0.2)
            assert prompt.value == "hi"

    run(scenario())
