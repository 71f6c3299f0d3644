"""The app part of the bad-input trial (docs/bad-inputs.md, "In the app"): what a user types into every
control field, the palette, the prompt (pastes and slash commands) ends in a clear answer, never a traceback.

`trial()` drives the real app (Textual's pilot, a synthetic source) through
each input and returns, per input, what the user saw; the test asserts that
the app lived through all of them, that every refused value was named under
its field and changed nothing, and that every paste arrived whole.
`python tests/ui/test_bad_inputs_app.py` prints the table for the doc.
"""

from __future__ import annotations

import sys

from textual import events
from textual.command import CommandPalette
from textual.widgets import Input

from gammatune_tui.engine.policies import PolicySettings

from uihelpers import SyntheticSource, make_app, run, wait_until

FIELD_INPUTS = ("", "abc", "-1", "0", "1e309", "nan", "inf", "1/0", "0x10", "1_000", "４", "9" * 30, "[/]",
                "[bold red]x", "\x1b[31m", "1e-400")
FIELDS = ("gamma0", "eta", "delta", "tau", "gamma_min", "gamma_max", "temperature")
PROMPTS = ("/system", "/system   ", "/systemx hello", "/System Be brief.", "/system [/bold]", "/", "//system",
           "   ", "[/]", "x" * 100_000)
PASTES = ('x = "\x1b[31mRED" tail', "a\x00b\nc\x00d\ne", "\n\n\n", "line\r" * 3, "l\n" * 20_000,
          "[paste 1: 3 lines, 10 chars]\nsecond\nthird", "\u202eevil\u202c\ncode\nhere")
PALETTE = ("zzzz", "[/]", "[bold]", "drafter: self:int8", "pace: 2")


class Kept(SyntheticSource):
    """Keeps every prompt it is sent (and takes system prompts, as a live source does)."""

    system = ""
    system_note = ""   # a pair that reads system prompts

    def set_system(self, text: str) -> None:
        self.system = text.strip()

    def set_drafter(self, name: str) -> None:
        self.drafter = name

    def events(self, prompt=None):
        self.sent = [*getattr(self, "sent", []), prompt]
        return super().events(prompt)


def _notices(app, since: int) -> str:
    return " | ".join(app.said[since:]) or "—"


async def trial() -> list[tuple[str, str, str]]:
    """(where, what was typed, what the user saw) for every input."""
    rows: list[tuple[str, str, str]] = []
    src = Kept(PolicySettings.build("gammatune+", 4), steps=3)
    app = make_app(src)
    app.said = []   # every notice, in order (the app's own list drops expired ones)
    notify = app.notify
    app.notify = lambda message, **kw: (app.said.append(message), notify(message, **kw))[1]
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.main_screen
        await wait_until(pilot, lambda: chat.ready, what="ready")
        for name in FIELDS:
            for text in FIELD_INPUTS:
                field = chat.query_one(f"#ctl-{name}", Input)
                field.focus()
                field.value = ""
                before = (chat.controls.settings, chat.controls.sampling)
                if text:
                    field.insert_text_at_cursor(text)   # as typed (the ESC byte too, which a key press cannot carry)
                await pilot.press("enter")
                await pilot.pause()
                error = chat.controls.error_for(name)
                changed = (chat.controls.settings, chat.controls.sampling) != before
                seen = error or ("applied" if changed else str(chat.query_one("#ctl-status").render()))
                rows.append((f"field {name}", text, seen))
                field.value = ""
                await pilot.press("escape")
            chat.controls.show_settings(PolicySettings.build("gammatune+", 4))   # back to sane values
        chat.query_one("#prompt", Input).focus()
        for text in PROMPTS:
            since = len(app.said)
            sent = len(getattr(src, "sent", []))
            prompt = chat.query_one("#prompt", Input)
            prompt.value = text
            await pilot.press("enter")
            await pilot.pause(0.2)
            await wait_until(pilot, lambda: not chat.generating, what="the answer")
            got = getattr(src, "sent", [])[sent:]
            seen = f"sent ({len(got[0]):,} chars)" if got else _notices(app, since)
            rows.append(("prompt", text if len(text) < 40 else f"{text[:6]}… ({len(text):,} chars)", seen))
        for text in PASTES:
            since = len(app.said)
            sent = len(getattr(src, "sent", []))
            prompt = chat.query_one("#prompt", Input)
            prompt.value = ""
            prompt.post_message(events.Paste(text))
            await pilot.pause(0.2)
            shown = prompt.value
            await pilot.press("enter")
            await pilot.pause(0.2)
            await wait_until(pilot, lambda: not chat.generating, what="the answer")
            got = getattr(src, "sent", [])[sent:]
            seen = (f"box: {shown[:40]!r}; sent {len(got[0]):,} chars" if got else
                    f"box: {shown[:40]!r}; {_notices(app, since)}")
            rows.append(("paste", repr(text[:30]) + ("…" if len(text) > 30 else ""), seen))
        for text in PALETTE:
            since = len(app.said)
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
            await pilot.press(*text)
            await pilot.pause(0.3)
            await pilot.press("enter")
            await pilot.pause(0.3)
            if isinstance(app.screen, CommandPalette):
                await pilot.press("escape")
                seen = "no match: the palette stays open until Esc"
            else:
                seen = _notices(app, since)
            await pilot.pause(0.2)
            rows.append(("palette", text, seen))
        assert app.is_running
    return rows


def test_every_bad_input_in_the_app_is_answered_and_nothing_is_lost():
    rows = run(trial())
    by = {(w, t): s for w, t, s in rows}
    for name in FIELDS:
        for text in ("", "abc", "nan", "inf", "1/0", "[/]", "[bold red]x", "\x1b[31m"):
            assert "must be" in by[(f"field {name}", text)], (name, text, by[(f"field {name}", text)])
    assert by[("field gamma0", "9" * 30)] == "γ0 9.99e29 is above γ max 8: raise γ max or lower γ0"
    assert by[("field gamma0", "1e309")] == "γ0 1.00e309 is above γ max 8: raise γ max or lower γ0"
    assert max(len(s) for _, _, s in rows) < 200   # no 310-digit number filling the panel
    assert by[("prompt", "/system [/bold]")].startswith("System prompt set")
    assert by[("prompt", "/system")].startswith("System prompt removed")
    assert by[("paste", repr('x = "\x1b[31mRED" tail'))] == """box: 'x = "^[[31mRED" tail'; sent 20 chars"""
    assert "sent 40,000 chars" in by[("paste", repr(("l\n" * 20_000)[:30]) + "…")]
    assert all("Traceback" not in s for _, _, s in rows)


if __name__ == "__main__":
    sys.path.insert(0, "tests/ui")
    for where, text, seen in run(trial()):
        shown = repr(text) if where.startswith("field") else text
        print(f"| {where} | `{shown}` | {seen} |".replace("\x1b", "\\x1b"))
