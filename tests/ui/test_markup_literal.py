"""Text the user typed (or a path, a model name, an error quoting either) shows as written, never read as markup.

`[/bold]` typed into a control field ended the app with a MarkupError (and
`[bold red]x` turned the field's error red and bold); a notice or a label
quoting such text did the same.
"""

from __future__ import annotations

from textual.widgets import Input, Label

from gammatune_tui.errors import ModelLoadError

from uihelpers import SyntheticSource, gated_chat, make_app, run, wait_until

HOSTILE = ("[/bold]", "[/]", "[bold red]x", "[link=x]y")


def test_markup_typed_into_every_field_is_refused_literally_and_the_chat_goes_on():
    async def scenario():
        async with gated_chat(2) as (src, pilot, chat):
            for name, label in (("eta", "η"), ("gamma0", "γ0"), ("gamma_max", "γ max"), ("temperature", "T")):
                for text in HOSTILE:
                    field = chat.query_one(f"#ctl-{name}", Input)
                    field.focus()
                    field.value = ""
                    await pilot.press(*text, "enter")
                    await pilot.pause()
                    error = chat.controls.error_for(name)
                    assert error.startswith(f"{label} must be a number") and error.endswith(f"got {text!r}"), error
            assert chat.app.is_running and chat.generating
            src.gate.release(100)
            await wait_until(pilot, lambda: not chat.generating, what="the answer to finish")

    run(scenario())


class _FailingSource(SyntheticSource):
    def prepare(self, progress):
        progress("reading models/[/bold]/config.json", 0.5)
        raise ModelLoadError("models/[/bold] holds no config.json [bold red]x")


def test_a_load_error_quoting_markup_is_shown_literally_in_the_notice_and_the_loading_line():
    async def scenario():
        app = make_app(_FailingSource())
        async with app.run_test(size=(100, 30)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.load_error is not None, what="the load error")
            await pilot.pause(0.1)
            assert app.is_running
            notices = [n.message for n in app._notifications]
            assert "models/[/bold] holds no config.json [bold red]x" in notices
            line = str(chat.query_one("#load-label", Label).render())
            assert line == "Could not prepare: models/[/bold] holds no config.json [bold red]x"

    run(scenario())
