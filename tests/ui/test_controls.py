"""The controls: only the parameters a method reads, adaptive-k's three, and errors in the user's words."""

from __future__ import annotations

from textual import events
from textual.color import Color
from textual.widgets import Input, Select

from gammatune_tui.engine.policies import METHODS, PolicySettings, used_params
from gammatune_tui.ui.widgets.controls import FIELDS, speak

from uihelpers import SyntheticSource, gated_chat, make_app, run, wait_until


def _shown(chat) -> set[str]:
    return {name for name, *_ in FIELDS if chat.query_one(f"#row-{name}").display}


def test_each_method_shows_the_parameters_it_reads_and_only_those():
    async def scenario():
        app = make_app(SyntheticSource(PolicySettings.build("adaptive-k", 4), steps=2))
        async with app.run_test(size=(120, 40)) as pilot:
            chat = app.main_screen
            assert _shown(chat) == {"gamma0", "ema_alpha", "alpha_prior", "cooldown", "gamma_min", "gamma_max",
                                    "temperature"}
            expected = {
                "specdecode": {"gamma0", "temperature"},
                "hf-heuristic": {"gamma0", "gamma_min", "gamma_max", "temperature"},
                "assistant-threshold": {"gamma0", "tau", "temperature"},
                "gammatune": {"gamma0", "eta", "delta", "gamma_min", "gamma_max", "temperature"},
                "gammatune+": {"gamma0", "eta", "delta", "tau", "gamma_min", "gamma_max", "temperature"},
                "adaptive-k": {"gamma0", "ema_alpha", "alpha_prior", "cooldown", "gamma_min", "gamma_max",
                               "temperature"},
                "p-min": {"gamma0", "p_min", "temperature"},
                "adaedl": {"gamma0", "edl_lambda", "edl_target", "temperature"},
                "svip": {"gamma0", "svip_h", "temperature"},
                "ema-tiers": {"gamma0", "gamma_min", "gamma_max", "temperature"},
                "ucb": {"gamma0", "gamma_min", "gamma_max", "temperature"},
                "costaware": {"gamma0", "calib_weight", "calib_forget", "gamma_min", "gamma_max", "temperature"},
            }
            assert set(expected) == set(METHODS)
            for method, fields in expected.items():
                chat.query_one("#ctl-method", Select).value = method
                await pilot.pause()
                assert _shown(chat) == fields, method
                assert fields == {"gamma0", "temperature"} | (set(used_params(method)) - {"dynamic_tau"})

    run(scenario())


def test_adaptive_k_parameters_apply_mid_generation_and_are_validated():
    async def scenario():
        async with gated_chat(2, settings=PolicySettings.build("adaptive-k", 4)) as (src, pilot, chat):
            cooldown = chat.query_one("#ctl-cooldown", Input)
            cooldown.focus()
            cooldown.value = ""
            await pilot.press(*"-1", "enter")
            await pilot.pause()
            assert chat.controls.error_for("cooldown") == "cooldown must be a whole number ≥ 0, got -1"
            assert src.requests == [] and chat.generating
            for name, value in (("cooldown", "5"), ("ema_alpha", "0.5"), ("alpha_prior", "0.6")):
                field = chat.query_one(f"#ctl-{name}", Input)
                field.focus()
                field.value = ""
                await pilot.press(*value, "enter")
            await wait_until(pilot, lambda: len(src.requests) == 3, what="three requests")
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 3, what="3rd step")
            ev = chat.steps[2]
            assert ev.settings_changed and ev.method == "adaptive-k"
            assert (ev.params["cooldown"], ev.params["ema_alpha"], ev.params["alpha_prior"]) == (5, 0.5, 0.6)
            alpha = chat.query_one("#ctl-ema_alpha", Input)
            alpha.focus()
            await pilot.press("up")                                   # ↑ steps it by 0.05
            await wait_until(pilot, lambda: len(src.requests) == 4)
            assert float(src.requests[-1][0].params.ema_alpha) == 0.55
            src.stop()

    run(scenario())


def test_the_peers_parameters_apply_mid_generation_and_the_open_list_names_the_groups():
    async def scenario():
        async with gated_chat(2, settings=PolicySettings.build("adaedl", 4)) as (src, pilot, chat):
            options = [str(o.prompt) for o in chat.query_one("#ctl-method", Select).query_one("SelectOverlay").options]
            assert options[0] == "specdecode  the paper's" and "adaedl  peers'" in options
            assert options[-1] == "costaware  gammatune's own"
            for name, value in (("edl_lambda", "0.3"), ("edl_target", "0.8")):
                field = chat.query_one(f"#ctl-{name}", Input)
                field.focus()
                field.value = ""
                await pilot.press(*value, "enter")
            await wait_until(pilot, lambda: len(src.requests) == 2, what="two requests")
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 3, what="3rd step")
            ev = chat.steps[2]
            assert ev.settings_changed and ev.method == "adaedl"
            assert (ev.params["edl_lambda"], ev.params["edl_target"]) == (0.3, 0.8)
            chat.query_one("#ctl-method", Select).value = "svip"
            await pilot.pause()
            h = chat.query_one("#ctl-svip_h", Input)
            h.focus()
            await pilot.press("up")                                   # ↑ steps it by 0.05
            await wait_until(pilot, lambda: len(src.requests) == 4)
            assert src.requests[-1][0].method == "svip" and float(src.requests[-1][0].params.svip_h) == 0.35
            src.stop()

    run(scenario())


def test_an_invalid_value_is_red_and_its_reason_wrapped_in_the_labels_on_screen():
    assert speak("gamma_min must be <= gamma_max, got gamma_min=9 > gamma_max=8") == \
        "γ min must be ≤ γ max, got γ min=9 > γ max=8"
    assert speak("ema_alpha must be in (0, 1], got 2") == "α EMA must be in (0, 1], got 2"

    async def scenario():
        async with gated_chat(1) as (src, pilot, chat):
            gmin = chat.query_one("#ctl-gamma_min", Input)
            gmin.focus()
            gmin.value = ""
            await pilot.press(*"20", "enter")
            await pilot.pause(0.3)
            chat.query_one("#prompt").focus()                                # the red stays after a blur
            await pilot.pause(0.3)
            reason = chat.controls.error_for("gamma_min")
            assert reason == "γ min must be ≤ γ max, got γ min=20 > γ max=8"
            error = Color.parse(app_theme_error(chat))
            assert gmin.styles.color.rgb == error.rgb                         # the value in the error colour
            label = chat.query_one("#err-gamma_min")
            assert label.styles.color.rgb == error.rgb
            assert label.region.width <= chat.query_one("#controls").region.width
            lines = label.region.height
            assert lines >= 2 or len(reason) <= label.region.width            # wrapped, never cut
            src.stop()

    run(scenario())


def app_theme_error(chat) -> str:
    return chat.app.theme_variables["error"]


def test_t_past_a_float_and_a_paste_of_several_lines_are_refused_as_typed():
    """Round 6 trial: T 1e400 read "T must be a number ≥ 0, got inf" (a number it is, and not what was typed);
    a paste of three lines into γ max kept the first line and dropped the rest without a word."""
    async def scenario():
        async with gated_chat(1) as (src, pilot, chat):
            t = chat.query_one("#ctl-temperature", Input)
            t.focus()
            for typed in ("1e400", "inf", "nan"):
                t.value = ""
                await pilot.press(*typed, "enter")
                await pilot.pause(0.1)
                assert chat.controls.error_for("temperature") == f"T must be a finite number ≥ 0, got '{typed}'"
            assert chat.controls.sampling.temperature == 0
            gmax = chat.query_one("#ctl-gamma_max", Input)
            gmax.focus()
            await pilot.pause(0.1)
            gmax.value = ""
            app = chat.app
            app.post_message(events.Paste("5\n6\n7"))
            await wait_until(pilot, lambda: gmax.value == "5 6 7", timeout=5, what="the whole paste in the field")
            await pilot.press("enter")
            await pilot.pause(0.1)
            assert "got '5 6 7'" in chat.controls.error_for("gamma_max") and chat.controls.settings.params.gamma_max == 8
            src.stop()

    run(scenario())
