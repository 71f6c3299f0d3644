"""What the panels say and when: refresh at once then a few times a second, numbering, wording, pace, notices, exports."""

from __future__ import annotations

import dataclasses
import time

from gammatune_tui.engine.events import DraftedToken, EmittedToken, StepEvent, TargetToken
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.render.printer import header_text
from gammatune_tui.render.session_info import settings_line
from gammatune_tui.render.tables import shown_params
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.source import Notice
from gammatune_tui.session.stats import RunningStats
from gammatune_tui.session.synthetic import synthetic_session
from gammatune_tui.ui.app import default_export_dir, make_replay_app
from gammatune_tui.ui.widgets.stats_panel import REGIME_HELP, render_stats
from gammatune_tui.ui.widgets.step_inspector import render_step

from uihelpers import SyntheticSource, finished_chat, gated_chat, make_app, plain, run, wait_until


def test_the_first_step_shows_in_stats_and_inspector_at_once():
    async def scenario():
        async with gated_chat(0) as (src, pilot, chat):
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 1, what="first step")
            await pilot.pause()                    # one message round: no timer has to run out first
            assert chat.inspector.event is chat.steps[0]
            assert "1 steps" in plain(chat.stats_panel)
            src.gate.release(1)
            await wait_until(pilot, lambda: len(chat.steps) == 2)
            await pilot.pause(0.4)                 # later steps within a quarter of a second
            assert chat.inspector.event is chat.steps[1] and "2 steps" in plain(chat.stats_panel)
            src.stop()

    run(scenario())


def test_statistics_lines_wrap_instead_of_being_cut():
    s = RunningStats()
    for e in synthetic_session("gammatune+", seed=1):
        s.add(e)
    text = plain(render_stats(s), width=44)
    assert "…" not in text
    flat = " ".join(text.split())
    for whole in ("per position", "T_draft", "s measured"):
        assert whole in flat, whole
    assert any(help_text in flat for help_text in REGIME_HELP.values())
    assert "done:" in flat and "the model ended its answer" in flat and "stop:" not in flat


def test_inspector_numbers_steps_within_their_turn_and_leaves_empty_slots_blank():
    async def scenario():
        async with finished_chat(6) as (app, pilot, chat):
            await pilot.press(*"again", "enter")
            await wait_until(pilot, lambda: len(chat.sessions) == 2 and not chat.generating, what="2nd turn")
            await pilot.pause(0.3)
            assert "turn 2 · step 6/6" in plain(chat.inspector)
            chat.select_step(2)
            await pilot.pause()
            assert "turn 1 · step 3/6" in plain(chat.inspector)

    run(scenario())
    tok = DraftedToken(1, "a", 0.9, 0.9, 0.9)
    bonus = StepEvent(step=0, method="specdecode", params={}, gamma=1, drafted=[tok], accepted=1,
                      target_token=TargetToken(2, " ", "bonus"),
                      emitted=[EmittedToken(1, "a", "draft"), EmittedToken(2, " ", "target")], gamma_next=1,
                      draft_s=0.0, verify_s=0.0)
    draft_row = next(ln for ln in plain(render_step(bonus)).splitlines() if ln.startswith("draft"))
    assert "·" not in draft_row            # `·` is how a space token is drawn: the empty slot stays blank


def test_replay_player_and_inspector_count_the_same_steps(tmp_path):
    one = synthetic_session("gammatune", max_new_tokens=20)
    two = synthetic_session("gammatune", max_new_tokens=30, prompt="second question")
    two[0] = dataclasses.replace(two[0], turn=1, user_text="second question")
    path = tmp_path / "chat.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(one)
        w.write_all(two)
    app = make_replay_app(read_recording(path), speed=0)
    n2 = sum(isinstance(e, StepEvent) for e in two)

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            await wait_until(pilot, lambda: len(screen.sessions) == 2 and screen.stats.summary is not None
                             and not screen.generating)
            await pilot.pause(0.5)
            player = plain(screen.query_one("#replay-info"))
            assert f"step {n2}/{n2}" in player
            assert f"gammatune · step {n2}/{n2}" in plain(screen.inspector)       # (the session is named by its label)
            assert "f9" not in {k.key for k in screen.query("FooterKey")}      # no pace for a recording

    run(scenario())


def test_headers_list_the_parameters_the_method_uses_and_the_seed_once():
    events = synthetic_session("specdecode")
    h = events[0]
    assert dict(shown_params(h.params, "specdecode")) == {}
    line = settings_line(h)
    assert "eta" not in line and "tau" not in line and line.count("seed") == 1
    printed = plain(header_text(h))
    assert printed.count("seed") == 1 and "eta" not in printed
    k = synthetic_session(PolicySettings.build("adaptive-k", 4, cooldown=3))[0]
    shown = set(dict(shown_params(k.params, "adaptive-k")))   # (its defaults for α EMA and α prior are not recorded)
    assert {"cooldown", "gamma_min", "gamma_max"} <= shown and not shown & {"eta", "delta", "tau"}


def test_the_pace_key_slows_a_live_session_and_shows_in_the_title():
    async def scenario():
        src = SyntheticSource(steps=400)
        app = make_app(src)
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            assert chat.title == "gammatune"
            await pilot.press("f9")
            assert src.pace == 10 and chat.title == "gammatune · pace 10 steps/s"
            await pilot.press("f9", "f9")
            assert src.pace == 2 and "pace 2 steps/s" in chat.title
            await pilot.press(*"x", "enter")
            await wait_until(pilot, lambda: chat.steps, what="the first step")
            t0, n0 = time.monotonic(), len(chat.steps)
            await pilot.pause(1.0)
            n1, dt = len(chat.steps), time.monotonic() - t0
            assert n1 - n0 <= 2 * dt + 1                            # about 2 a second, not 400 at once
            await pilot.press("shift+f9", "shift+f9", "shift+f9")   # back to full speed
            assert src.pace == 0 and chat.title == "gammatune"
            await wait_until(pilot, lambda: not chat.generating, what="the rest at full speed")
            assert len(chat.steps) == 400
            assert chat.stats.elapsed_s == chat.steps[-1].elapsed_s   # modelled times: the waits never counted

    run(scenario())


def test_the_pace_keys_stop_at_their_ends_with_a_notice():
    """Shift+F9 "faster" at full speed wrapped to 0.5 steps/s, F9 "slower" at 0.5 to full speed (issue 40 row 12g)."""
    async def scenario():
        src = SyntheticSource(steps=3)
        app = make_app(src)
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            await pilot.press("shift+f9")
            await pilot.pause()
            assert src.pace == 0 and chat.title == "gammatune"
            assert "already at full speed" in list(app._notifications)[-1].message
            await pilot.press(*["f9"] * 5)   # 10, 4, 2, 1, 0.5
            assert src.pace == 0.5
            await pilot.press("f9")
            await pilot.pause()
            assert src.pace == 0.5 and chat.title == "gammatune · pace 0.5 steps/s"
            assert "the slowest" in list(app._notifications)[-1].message
            await pilot.press("shift+f9")
            assert src.pace == 1

    run(scenario())


def test_a_source_notice_is_shown_and_noted_in_the_transcript_but_not_recorded(tmp_path):
    class Noticing(SyntheticSource):
        def events(self, prompt):
            yield Notice("The conversation has outgrown the model's 96-token context: the oldest turn is left out.")
            yield from super().events(prompt)

    async def scenario():
        rec = tmp_path / "rec.jsonl"
        app = make_app(Noticing(steps=3), prompt="x", record=rec)
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None)
            await wait_until(pilot, lambda: any("oldest turn is left out" in str(n.message)
                                                for n in app._notifications), what="the notice")
            assert "⚠ The conversation has outgrown" in chat.transcript.plain_text()
        assert len(read_recording(rec).sessions) == 1

    run(scenario())


def test_exports_go_to_the_export_dir_and_the_html_has_legend_settings_and_stats(tmp_path, monkeypatch):
    monkeypatch.setenv("GAMMATUNE_EXPORT_DIR", str(tmp_path / "out"))
    assert default_export_dir() == (tmp_path / "out").resolve()
    monkeypatch.delenv("GAMMATUNE_EXPORT_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_export_dir() == (tmp_path / "data" / "gammatune" / "exports").resolve()
    monkeypatch.setenv("GAMMATUNE_EXPORT_DIR", str(tmp_path / "out"))

    async def scenario():
        async with finished_chat(5) as (app, pilot, chat):
            await pilot.press("f3")
            await pilot.press("f2")
            await pilot.pause(0.3)
            await wait_until(pilot, lambda: len(list((tmp_path / "out").iterdir())) == 2, what="two files")
            files = sorted((tmp_path / "out").iterdir())
            assert [f.suffix for f in files] == [".html", ".svg"]
            await wait_until(pilot, lambda: sum("saved to" in str(n.message) for n in app._notifications) == 2,
                             what="two notices")
            messages = [str(n.message) for n in app._notifications]
            for f in files:                                          # the full path, where it was written
                assert any(str(f) in m for m in messages), (f, messages)
            html = files[0].read_text()
            for piece in ("draft tokens the target accepted", "turn 1: statistics", "settings: gammatune+",
                          "tokens/s", "per position", "greedy"):
                assert piece in html.replace("&#x27;", "'"), piece

    run(scenario())


def test_small_probabilities_in_the_inspector_read_right_beside_their_ratio():
    """Two decimals showed "q 0.01, p 0.00, min(1,p/q) 0.40" (issue 24): under 0.1, two significant digits."""
    tok = DraftedToken(1, "a", 0.3, 0.0099, 0.00396)
    ev = StepEvent(step=0, method="specdecode", params={}, gamma=1, drafted=[tok], accepted=0,
                   target_token=TargetToken(2, "b", "correction"),
                   emitted=[EmittedToken(2, "b", "target")], gamma_next=1, draft_s=0.0, verify_s=0.0)
    rows = {ln.split("  ")[0].strip(): ln for ln in plain(render_step(ev)).splitlines()}
    assert "0.0099" in rows["q draft"] and "0.0040" in rows["p target"] and "0.40" in rows["min(1,p/q)"]
    assert "0.30" in rows["top-1 q"]
