"""The controls change only what the user changed: no mark for an unchanged field, no γ0 above the γ max on screen."""

from __future__ import annotations

from textual.widgets import Input

from gammatune_tui.engine.policies import PolicySettings

from uihelpers import gated_chat, run, wait_until


async def _type(pilot, chat, name: str, text: str) -> None:
    field = chat.query_one(f"#ctl-{name}", Input)
    field.focus()
    field.value = ""
    await pilot.press(*text, "enter")
    await pilot.pause()


def test_enter_on_an_unchanged_field_mid_answer_records_no_change_and_no_mark():
    async def scenario():
        async with gated_chat(3, settings=PolicySettings.build("gammatune", 4)) as (src, pilot, chat):
            for name, text in (("gamma0", "4"), ("eta", chat.query_one("#ctl-eta", Input).value),
                               ("temperature", "0"), ("temperature", "0.0"), ("gamma_max", "8")):
                await _type(pilot, chat, name, text)
                assert chat.controls.error_for(name) == ""
            assert str(chat.query_one("#ctl-status").render()) == "γ max is already 8: nothing to apply"
            assert src.requests == []
            src.gate.release(2)
            await wait_until(pilot, lambda: len(chat.steps) == 5, what="5 steps")
            assert not any(ev.settings_changed for ev in chat.steps[1:])
            assert "⟦" not in chat.transcript.plain_text()
            await _type(pilot, chat, "gamma0", "6")   # a real change is still named for what it is
            await wait_until(pilot, lambda: len(src.requests) == 1, what="the γ0 request")
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 6, what="6 steps")
            assert "⟦step 6: γ0 4 → 6⟧" in chat.transcript.plain_text()
            src.stop()

    run(scenario())


def test_gamma0_above_the_gamma_max_on_screen_is_refused_as_the_cli_refuses_it():
    async def scenario():
        async with gated_chat(2, settings=PolicySettings.build("gammatune", 4)) as (src, pilot, chat):
            await _type(pilot, chat, "gamma0", "1000000")
            assert chat.controls.error_for("gamma0") == "γ0 1000000 is above γ max 8: raise γ max or lower γ0"
            assert src.requests == [] and chat.controls.settings.params.gamma_max == 8
            src.gate.release(20)
            await wait_until(pilot, lambda: len(chat.steps) == 22, what="22 steps")
            assert max(ev.gamma for ev in chat.steps) <= 8
            await _type(pilot, chat, "gamma_max", "32")    # raised first, γ0 may follow
            await _type(pilot, chat, "gamma0", "20")
            assert chat.controls.error_for("gamma0") == ""
            assert src.requests[-1][0].gamma0 == 20 and src.requests[-1][0].params.gamma_max == 32
            src.stop()

    run(scenario())


def test_a_method_that_reads_no_bounds_lets_them_follow_gamma0_and_shows_them():
    async def scenario():
        async with gated_chat(2, settings=PolicySettings.build("specdecode", 4)) as (src, pilot, chat):
            await _type(pilot, chat, "gamma0", "20")
            assert chat.controls.error_for("gamma0") == "" and src.requests[-1][0].gamma0 == 20
            assert chat.query_one("#ctl-gamma_max", Input).value == "20"   # hidden now, right when shown
            src.stop()

    run(scenario())
