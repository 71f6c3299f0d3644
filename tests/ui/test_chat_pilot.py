"""Pilot tests: every interaction of the chat screen, against the real UI with a synthetic source."""

from __future__ import annotations

import threading

from textual.widgets import Input, Select

from gammatune_tui.engine.policies import DEFAULT_ETA, DEFAULT_GAMMA_MAX, PolicySettings
from gammatune_tui.session.recording import read_recording
from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import SIZE, plain, SyntheticSource, finished_chat, gated_chat, make_app, run, wait_until


def test_send_prompt_streams_a_turn_with_colours(export_dir):
    async def scenario():
        src = SyntheticSource(steps=15)
        app = make_app(src, export_dir=export_dir)
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            assert app.focused is chat.query_one("#prompt")
            welcome = chat.query_one("#welcome")
            assert welcome.display and "draft tokens the target accepted" in plain(welcome)
            await pilot.press(*"def f(", "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="summary")
            ts = chat.transcript
            roles = [p.role for p in ts.wrapped.tokens]
            assert "prompt" in roles and "draft" in roles and "target" in roles
            assert "def f(" in ts.plain_text()
            assert len(chat.steps) == 15
            assert chat.stats.tokens == sum(len(s.emitted) for s in chat.steps)
            assert chat.generating is False
            assert chat.query_one("#prompt", Input).value == ""
            assert not welcome.display
            # a second turn goes through the same source with the next turn number
            await pilot.press(*"more", "enter")
            await wait_until(pilot, lambda: len(chat.sessions) == 2 and chat.stats.summary is not None)
            assert chat.sessions[1].header.turn == 1
            assert "turn 2" in ts.plain_text()

    run(scenario())


def test_switch_method_mid_generation_next_event_carries_it():
    async def scenario():
        async with gated_chat(3, settings=PolicySettings.build("gammatune+", 4)) as (src, pilot, chat):
            assert chat.generating
            chat.query_one("#ctl-method", Select).value = "specdecode"
            await wait_until(pilot, lambda: len(src.requests) == 1, what="request")
            assert src.requests[0][0].method == "specdecode"
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 4, what="4th step")
            ev = chat.steps[3]
            assert ev.method == "specdecode" and ev.settings_changed
            assert all(not s.settings_changed and s.method == "gammatune+" for s in chat.steps[:3])
            assert 3 in chat.chart.changes
            src.stop()

    run(scenario())


def test_invalid_eta_refused_in_place_while_generation_goes_on():
    async def scenario():
        async with gated_chat(2) as (src, pilot, chat):
            eta = chat.query_one("#ctl-eta", Input)
            # the reason is spoken with the field's own label (η, not eta)
            for bad, reason in (("1.5", "η must be in (0, 1], got 1.5"), ("abc", "η must be a number")):
                eta.focus()
                eta.value = ""
                await pilot.press(*bad, "enter")
                await pilot.pause()
                assert reason in chat.controls.error_for("eta")
                assert eta.has_class("-refused")
                assert src.requests == []                   # nothing reached the source
                assert chat.generating                      # the generation goes on
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 3)
            assert chat.steps[2].params["eta"] == float(DEFAULT_ETA) and not chat.steps[2].settings_changed
            # a valid value clears the error and is applied at the next step
            eta.value = ""
            await pilot.press(*"0.25", "enter")
            await wait_until(pilot, lambda: len(src.requests) == 1)
            assert chat.controls.error_for("eta") == "" and not eta.has_class("-refused")
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 4)
            assert chat.steps[3].params["eta"] == 0.25 and chat.steps[3].settings_changed
            src.stop()

    run(scenario())


def test_arrow_keys_step_a_control_and_temperature_goes_to_sampling():
    async def scenario():
        async with gated_chat() as (src, pilot, chat):
            g = chat.query_one("#ctl-gamma_max", Input)
            g.focus()
            await pilot.press("down")
            await wait_until(pilot, lambda: len(src.requests) == 1)
            lower = DEFAULT_GAMMA_MAX - 1   # one step down from the default bound
            assert src.requests[0][0].params.gamma_max == lower and g.value == str(lower)
            t = chat.query_one("#ctl-temperature", Input)
            t.focus()
            t.value = ""
            await pilot.press(*"-1", "enter")
            await pilot.pause()
            assert chat.controls.error_for("temperature") == "T must be a number ≥ 0, got -1.0"
            t.value = ""
            await pilot.press(*"0.7", "enter")
            await wait_until(pilot, lambda: len(src.requests) == 2)
            assert src.requests[1][1].temperature == 0.7 and src.requests[1][0] is None
            src.stop()

    run(scenario())


def test_escape_stops_cleanly():
    async def scenario():
        async with gated_chat(2) as (src, pilot, chat):
            await pilot.press("escape")
            await wait_until(pilot, lambda: not chat.generating, what="stopped")
            assert chat.stats.summary.stop_reason == "stopped"
            assert len(chat.steps) == 2
            # the app stays usable: a new prompt runs
            src.gate.release(100)
            await pilot.press(*"again", "enter")
            await wait_until(pilot, lambda: len(chat.sessions) == 2 and not chat.generating)
            assert chat.stats.summary.stop_reason == "max_new_tokens"

    run(scenario())


def test_prompt_while_generating_is_refused_not_lost():
    async def scenario():
        async with gated_chat(1) as (src, pilot, chat):
            await pilot.press(*"second", "enter")
            await pilot.pause()
            assert chat.query_one("#prompt", Input).value == "second"
            assert len(chat.sessions) == 1
            src.stop()

    run(scenario())


def test_app_usable_while_preparing_and_prompt_queued():
    class SlowSource(SyntheticSource):
        def __init__(self):
            super().__init__(steps=5)
            self.release = threading.Event()

        def prepare(self, progress):
            progress("target", 0.4)
            self.release.wait(30)
            progress("ready", 1.0)

    async def scenario():
        src = SlowSource()
        app = make_app(src)
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            bar = chat.query_one("#load-bar")
            await wait_until(pilot, lambda: "target" in str(chat.query_one("#load-label").render()))
            await wait_until(pilot, lambda: bar.progress == 40)
            assert "%" not in str(chat.query_one("#load-label").render())   # the bar shows the percentage, once
            assert chat.query_one("#loading").display
            await pilot.press(*"early", "enter")
            await pilot.press("f4")                              # other keys work meanwhile
            assert chat.transcript.shade
            assert chat.queued_prompt == "early" and not chat.generating
            src.release.set()
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="queued turn")
            assert chat.sessions[0].header.user_text == "early"
            assert not chat.query_one("#loading").display

    run(scenario())


def test_load_failure_is_shown_not_raised():
    class Broken(SyntheticSource):
        def prepare(self, progress):
            from gammatune_tui.errors import ModelLoadError
            raise ModelLoadError("no such model: /nowhere")

    async def scenario():
        app = make_app(Broken())
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.load_error != "")
            assert "no such model" in str(chat.query_one("#load-label").render())
            await pilot.press(*"hi", "enter")
            await pilot.pause()
            assert not chat.generating

    run(scenario())


def test_theme_switch_key_and_palette_command():
    async def scenario():
        app = make_app(SyntheticSource(steps=3), theme="paper")
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            assert app.theme == "paper"
            await pilot.press("f6")
            assert app.theme != "paper"
            app.set_theme("okabe-ito")
            await pilot.pause()
            assert app.theme == "okabe-ito"
            assert chat.transcript._roles["target"].color == app.gamma_themes["okabe-ito"].roles["target"].color
            assert chat.inspector.roles["draft"].color.lower() == "#009e73"
            titles = [c.title for c in app.get_system_commands(chat)]
            for t in ("Stop generation", "Help: keys", "Save SVG screenshot", "Export transcript to HTML",
                      "Toggle confidence shading", "Toggle chart history", "Toggle step inspector",
                      "Method: gammatune", "Method: specdecode", "Theme: light", "Theme: high-contrast"):
                assert t in titles

    run(scenario())


def test_command_palette_runs_a_method_switch():
    async def scenario():
        src = SyntheticSource(steps=3)
        app = make_app(src)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.main_screen.ready)
            await pilot.press("ctrl+p")
            await pilot.pause(0.2)
            await pilot.press(*"Method: hf-heuristic")
            await pilot.pause(0.5)
            await pilot.press("enter")
            await wait_until(pilot, lambda: src.requests, what="palette request")
            assert src.requests[-1][0].method == "hf-heuristic"
            assert app.main_screen.controls.settings.method == "hf-heuristic"

    run(scenario())


def test_step_inspector_follows_and_pins_steps():
    async def scenario():
        async with finished_chat(12) as (app, pilot, chat):
            await pilot.pause(0.3)
            insp = chat.inspector
            assert insp.event is chat.steps[-1]              # follows the latest step
            chat.transcript.focus()
            await pilot.press("left")
            await pilot.press("left")
            await pilot.pause()
            assert insp.event is chat.steps[9] and chat.transcript.selected_step == 9
            await pilot.press("right")
            await pilot.pause()
            assert insp.event is chat.steps[10]
            # click on a token of step 2 selects it
            ts = chat.transcript
            y, x = next((y, sum(len(q.text) for q in line[:i])) for y, line in enumerate(ts.wrapped.lines)
                        for i, p in enumerate(line) if p.step == 2)
            ts.scroll_to(y=0, animate=False)
            await pilot.pause()
            await pilot.click("#transcript", offset=(x + 1 + ts.gutter.left, y - int(ts.scroll_offset.y)))
            await pilot.pause()
            assert insp.event is chat.steps[2]
            await pilot.press("escape")                        # idle Esc unpins
            await pilot.pause(0.3)
            assert insp.event is chat.steps[-1] and ts.selected_step is None

    run(scenario())


def test_help_screen_lists_bindings():
    async def scenario():
        app = make_app(SyntheticSource(steps=1))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            text = plain(app.screen.query_one("#help-text"))
            for key in ("Esc", "Ctrl+P", "F2", "F3", "F4", "F5", "F6", "F7"):
                assert key in text
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)

    run(scenario())


def test_record_writes_every_event_and_exports(export_dir):
    async def scenario():
        rec = export_dir / "session.jsonl"
        async with finished_chat(7, record=rec, export_dir=export_dir) as (app, pilot, chat):
            # flushed per event: readable while the app still runs
            r = read_recording(rec)
            assert len(r.sessions) == 1 and len(r.sessions[0].steps) == 7 and r.sessions[0].summary is not None
            html_path = chat.action_export_html()
            svg_path = app.action_screenshot_svg()
        assert html_path.read_text().startswith("<!DOCTYPE html>")
        assert open(svg_path).read().lstrip().startswith("<svg")

    run(scenario())


def test_toggles_shade_history_inspector():
    async def scenario():
        async with finished_chat(100) as (app, pilot, chat):
            assert chat.chart.visible_range() == (40, 100)
            await pilot.press("f5")
            assert chat.chart.visible_range() == (0, 100)
            await pilot.press("f7")
            assert not chat.inspector.display
            await pilot.press("f4")
            assert chat.transcript.shade

    run(scenario())
