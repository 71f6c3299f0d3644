"""A terminal paste holding an ESC byte arrives whole and in order, the ESC shown as `^[`.

Textual's parser read the ESC as the start of a key sequence: what followed
it arrived as key presses before the paste, and a three-line paste's
newlines were Enter presses. The tests feed the terminal's bytes to the
parser the app's driver uses, split at every place a read could split them.
"""

from __future__ import annotations

from textual import events

from gammatune_tui.ui.paste_filter import PasteFilter

from uihelpers import SyntheticSource, make_app, run, wait_until

ONE_LINE = 'x = "\x1b[31mRED" tail'
THREE_LINES = 'a = 1\r\nx = "\x1b[31mRED" tail\r\nb = 2'


def _driver_parser():
    make_app(SyntheticSource(steps=1))   # the app puts its filter in front of the driver's parser
    from textual.drivers import linux_driver

    return linux_driver.XTermParser(False)


def _parse(chunks: list[str]) -> list:
    parser = _driver_parser()
    got = []
    for chunk in chunks:
        got += list(parser.feed(chunk))
    return [e for e in got if isinstance(e, (events.Paste, events.Key))]


def _splits(data: str):
    yield [data]
    for i in range(1, len(data)):
        yield [data[:i], data[i:]]


def test_a_one_line_paste_holding_esc_arrives_whole_and_in_order():
    data = "\x1b[200~" + ONE_LINE + "\x1b[201~"
    for chunks in _splits(data):
        got = _parse(chunks)
        assert [type(e) for e in got] == [events.Paste], (chunks, got)
        assert got[0].text == 'x = "^[[31mRED" tail', chunks


def test_a_three_line_paste_holding_esc_arrives_whole_and_keys_around_it_stay_keys():
    data = "ab\x1b[200~" + THREE_LINES + "\x1b[201~c"
    for chunks in _splits(data):
        got = _parse(chunks)
        assert [getattr(e, "character", None) or e.text for e in got] == [
            "a", "b", 'a = 1\r\nx = "^[[31mRED" tail\r\nb = 2', "c"], chunks


def test_an_esc_outside_a_paste_is_still_the_escape_key():
    got = _parse(["a\x1b"])
    parser_keys = [e.key for e in got if isinstance(e, events.Key)]
    assert parser_keys[0] == "a"
    f = PasteFilter()
    assert f("a\x1b") == "a\x1b" and f.held == ""


class Recording(SyntheticSource):
    def events(self, prompt=None):
        self.sent = [*getattr(self, "sent", []), prompt]
        return super().events(prompt)


def test_the_three_line_paste_is_sent_whole_with_its_marker_and_in_order():
    async def scenario():
        src = Recording(steps=2)
        app = make_app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            prompt = chat.query_one("#prompt")
            await pilot.press(*"see: ")
            for e in _parse(["\x1b[200~" + THREE_LINES + "\x1b[201~"]):
                prompt.post_message(e)
            await wait_until(pilot, lambda: "[paste 1" in prompt.value, what="the paste's marker")
            assert prompt.value == "see: [paste 1: 3 lines, 32 chars]"
            await pilot.press(*" ok", "enter")
            await wait_until(pilot, lambda: getattr(src, "sent", None), what="the prompt sent")
            assert src.sent == ['see: a = 1\nx = "^[[31mRED" tail\nb = 2 ok']

    run(scenario())
