"""Pilot tests: where typed keys go (text typed while the app opens, Tab order) and the copy keys."""

from __future__ import annotations

from textual import events

from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import SyntheticSource, make_app, plain, run, wait_until

KEY_NAMES = {"?": "question_mark", " ": "space"}


def test_text_typed_while_chat_opens_lands_whole_in_the_prompt():
    """Keys that arrive before the screen has mounted (as a fast typist's do) go to the prompt; `?` opens no help."""
    text = "Is this a question? yes"

    async def scenario(size):
        app = make_app(SyntheticSource(steps=5))
        for ch in text:   # queued before the app runs: handled before the prompt has the focus
            app.post_message(events.Key(KEY_NAMES.get(ch, ch), ch))
        async with app.run_test(size=size) as pilot:
            prompt = app.main_screen.query_one("#prompt")
            await wait_until(pilot, lambda: prompt.value == text or isinstance(app.screen, HelpScreen),
                             what="the typed text")
            assert not isinstance(app.screen, HelpScreen)
            assert prompt.value == text and app.focused is prompt
            # from now on `?` in the empty prompt is the help key again
            prompt.value = ""
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)

    for size in ((120, 40), (80, 24), (160, 48)):
        run(scenario(size))


# -- 80×24: the transcript gets most of the screen; Tab goes prompt → method → parameters -----------
async def _settled(pilot, chat):
    await wait_until(pilot, lambda: chat.stats.summary is not None, what="summary")
    await pilot.pause(0.2)


def test_at_80x24_the_transcript_gets_most_of_the_screen_and_f7_still_shows_the_whole_step():
    async def scenario():
        app = make_app(SyntheticSource(steps=30), prompt="x")
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await _settled(pilot, chat)
            assert chat.transcript.region.height >= 14, chat.transcript.region    # of 24 rows
            insp = chat.inspector
            assert insp.region.height >= 1 and "γ planned" in plain(insp, width=78).splitlines()[0]   # its first row
            await pilot.press("f7")                                  # the whole table
            await pilot.pause(0.2)
            assert insp.region.height >= 8
            await pilot.press("f7")                                  # hidden
            await pilot.pause(0.2)
            assert not insp.display
            await pilot.press("f7")                                  # the step line again
            await pilot.pause(0.2)
            assert insp.display and insp.region.height < 8

    run(scenario())


def test_replay_at_80x24_leaves_most_rows_to_the_transcript(tmp_path):
    from gammatune_tui.session.recording import RecordingWriter, read_recording
    from gammatune_tui.session.synthetic import synthetic_session
    from gammatune_tui.ui.app import make_replay_app

    path = tmp_path / "rec.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(synthetic_session("gammatune", seed=1))

    async def scenario():
        app = make_replay_app(read_recording(path), speed=0)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await _settled(pilot, chat)
            assert chat.transcript.region.height >= 10, chat.transcript.region

    run(scenario())


def test_tab_goes_prompt_method_parameters_at_80x24_and_160x48():
    async def scenario(size):
        app = make_app(SyntheticSource(steps=5), prompt="x")
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await _settled(pilot, chat)
            prompt = chat.query_one("#prompt")
            assert app.focused is prompt
            method, gamma0 = chat.query_one("#ctl-method"), chat.query_one("#ctl-gamma0")
            await pilot.press("tab")
            await wait_until(pilot, lambda: app.focused is method, what="the method")
            assert chat.query_one("#side").display                   # at 80 columns the panels come into view
            await pilot.press("tab")
            await wait_until(pilot, lambda: app.focused is gamma0, what="γ0")
            await pilot.press("shift+tab", "shift+tab")
            await wait_until(pilot, lambda: app.focused is prompt, what="the prompt")
            await pilot.pause(0.1)
            assert prompt.region.height > 0                           # back, and visible again

    for size in ((80, 24), (160, 48)):
        run(scenario(size))


# -- copy: the last answer and the whole transcript, plain --------------------------------------
def test_copy_keys_put_plain_answers_on_the_clipboard_without_the_end_of_turn_token():
    async def scenario(size):
        app = make_app(SyntheticSource(text="one [two] </s>"))     # a session is the text once, ended by eos
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await pilot.press("ctrl+y")
            assert app.clipboard == ""                                 # nothing yet: a notice, no copy
            for prompt in ("first ", "second "):
                await pilot.press(*prompt, "enter")
                await wait_until(pilot, lambda: chat.stats.summary is not None and not chat.generating,
                                 what="the answer")
            assert chat.stats.summary.stop_reason == "eos"
            await pilot.press("ctrl+y")
            assert app.clipboard == "one [two] "                     # Rich markup stays text; </s> is gone
            await pilot.press("ctrl+t")
            assert app.clipboard == "first one [two] \n\nsecond one [two] \n"
            assert "──" not in app.clipboard and "turn" not in app.clipboard   # no separators, unlike the transcript
            titles = [c.title for c in app.main_screen.system_commands()]
            assert "Copy last answer" in titles and "Copy whole transcript" in titles

    for size in ((80, 24), (160, 48)):
        run(scenario(size))


def test_the_help_lists_the_copy_keys():
    from gammatune_tui.ui.screens.help import CHAT_KEYS as KEYS

    keys = dict(KEYS)
    assert "last answer" in keys["Ctrl+Y"] and "whole transcript" in keys["Ctrl+T"]


# -- a prompt that is not UTF-8 text: a clear notice, never a raw TypeError ------------------------
def test_undecodable_bytes_in_the_terminal_input_become_replacement_characters():
    """Textual decodes stdin strictly: a binary paste ended the app with a UnicodeDecodeError traceback."""
    from textual.drivers import linux_driver

    make_app(SyntheticSource(steps=1))   # building the app makes the terminal input tolerant
    decode = linux_driver.getincrementaldecoder("utf-8")().decode
    assert decode(b"ab\xffcd") == "ab\ufffdcd"
    assert decode(b"caf\xc3") == "caf" and decode(b"\xa9!") == "\u00e9!"   # split characters still join


def test_a_prompt_with_undecodable_bytes_is_sent_cleaned_with_a_notice():
    class Recording(SyntheticSource):
        def events(self, prompt=None):
            self.sent = prompt
            return super().events(prompt)

    async def scenario(size):
        src = Recording(steps=3)
        app = make_app(src, prompt="from the command line: \udcff\udcfe end")   # surrogateescape'd bytes
        notices = []
        app.notify = lambda message, **kw: notices.append((message, kw))   # type: ignore[method-assign]
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="the answer")
            assert "\ufffd\ufffd end" in src.sent and not any("\ud800" <= ch <= "\udfff" for ch in src.sent)
            assert any("not UTF-8" in m and "U+FFFD" in m for m, _ in notices), notices
            assert not any("TypeError" in m for m, _ in notices)
            # the same pasted into the prompt (the terminal input now gives U+FFFD for the bytes)
            notices.clear()
            prompt = chat.query_one("#prompt")
            prompt.post_message(events.Paste("pasted ab\ufffdcd"))
            await wait_until(pilot, lambda: prompt.value == "pasted ab\ufffdcd", what="the paste")
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(chat.sessions) == 2 and chat.stats.summary is not None)
            assert src.sent == "pasted ab\ufffdcd" and any("not UTF-8" in m for m, _ in notices), notices

    for size in ((80, 24), (160, 48)):
        run(scenario(size))


def test_an_enter_typed_before_the_app_has_drawn_sends_the_prompt():
    """`gammatune chat`, then a prompt and Enter typed at once: the text was kept and the Enter lost."""
    class Kept(SyntheticSource):
        def events(self, prompt=None):
            self.sent = [*getattr(self, "sent", []), prompt]
            return super().events(prompt)

    async def scenario():
        src = Kept(steps=3)
        app = make_app(src)
        for ch in "def f(x):":
            app.post_message(events.Key(KEY_NAMES.get(ch, ch), ch))
        # typed before the app set the terminal to raw mode, Enter arrives as a newline: ctrl+j
        app.post_message(events.Key("ctrl+j", "\n"))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: getattr(src, "sent", None), what="the prompt sent")
            assert src.sent == ["def f(x):"]
            assert app.main_screen.query_one("#prompt").value == ""

    run(scenario())
