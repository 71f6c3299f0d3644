"""The chat screen's shape: one screen over `GammaScreen`, composed of widgets that own their state.

It was a five-class chain (`GammaScreen → ChatBase → ChatViews → ChatActions
→ ChatScreen`, issue 44) in which each layer reached into the screen's
widgets. These tests hold what replaced it: no base class between the chat
screen and `GammaScreen`; the panels' switch, the inspector's step, the
shading and the prompt's refusals are state of the widgets that show them,
set by their own methods or from above, and what the widgets pick goes up as
messages.
"""

from __future__ import annotations

import inspect

from textual.screen import Screen

from gammatune_tui.ui import screens
from gammatune_tui.ui.screens.base import GammaScreen
from gammatune_tui.ui.screens.chat import ChatScreen
from gammatune_tui.ui.screens.replay import ReplayChatScreen
from gammatune_tui.ui.widgets.chat_layout import ChatLayout, SidePanel
from gammatune_tui.ui.widgets.prompt import PromptInput
from gammatune_tui.ui.widgets.transcript_column import TranscriptColumn

from uihelpers import SyntheticSource, gated_chat, make_app, run, wait_until


def _between(cls: type) -> list[type]:
    """The classes of `cls`'s MRO after it and before Textual's `Screen`."""
    mro = cls.__mro__
    return list(mro[1:mro.index(Screen)])


def test_the_chat_screen_stands_on_gamma_screen_alone():
    assert _between(ChatScreen) == [GammaScreen]
    assert _between(ReplayChatScreen) == [ChatScreen, GammaScreen]   # the player keys over the chat, nothing between
    for _name, cls in inspect.getmembers(screens, inspect.isclass):   # no layer left for a screen to stand on
        assert not (issubclass(cls, Screen) and cls.__name__.startswith("Chat") and cls is not ChatScreen), cls
    import pkgutil
    assert not {"chat_base", "chat_views", "chat_actions"} & {m.name for m in pkgutil.iter_modules(screens.__path__)}


def test_the_screen_is_composed_of_widgets_that_own_their_parts():
    async def go():
        app = make_app(SyntheticSource(steps=4), prompt="x")
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="summary")
            layout = chat.query_one("#main")
            assert isinstance(layout, ChatLayout) and chat.columns is layout
            assert isinstance(chat.query_one("#left"), TranscriptColumn)
            assert isinstance(chat.query_one("#side"), SidePanel)
            assert chat.query_one("#controls").parent is chat.query_one("#side")   # the panel composes its parts

            # F8 at 80 columns: the layout's own switch, not a class the screen carries
            assert not layout.panels and not chat.query_one("#side").display
            await pilot.press("f8")
            await pilot.pause(0.2)
            assert layout.panels and layout.has_class("-panels") and not chat.has_class("-panels")
            assert chat.query_one("#side").display and not chat.query_one("#left").display
            layout.toggle_panels()   # the same switch, called on the widget
            await pilot.pause(0.2)
            assert not layout.panels and chat.query_one("#left").display

            # the inspector's step: the column's, set together on the transcript and the inspector
            column = chat.column
            column.select_step(1)
            assert chat.transcript.selected_step == 1 and not chat.inspector.follow and not column.following
            column.select_step(None)
            assert chat.transcript.selected_step is None and column.following

            # the palette's chat entries, gathered from their owners, in the order they always had
            titles = [c.title for c in chat.system_commands()]
            assert titles[:12] == ["Stop generation", "Export transcript to HTML", "Copy last answer",
                                   "Copy whole transcript", "Show load times", "Toggle confidence shading",
                                   "Toggle chart history", "Toggle step inspector", "Switch transcript / panels",
                                   "Inspect latest step", "Focus prompt", "Focus controls"]
            assert any(t.startswith("Pace: ") for t in titles) and any(t.startswith("Method: ") for t in titles)

            # F4: the transcript's own shading
            shade = chat.transcript.shade
            await pilot.press("f4")
            assert chat.transcript.shade is not shade

    run(go())


def test_the_prompt_refuses_from_the_state_set_down_and_sends_up_what_goes():
    async def go():
        async with gated_chat(released=1) as (src, pilot, chat):
            app = chat.app
            box = chat.query_one("#prompt", PromptInput)
            assert chat.generating and box.busy   # the screen's state, set down on the box
            assert app.focused is box
            box.value = "another"
            await pilot.press("enter")
            await pilot.pause(0.2)
            assert box.value == "another" and len(chat.sessions) == 1   # refused while a turn runs: kept, with a notice
            assert any("press Esc" in str(n.message) for n in app._notifications)
            src.gate.release(100)
            await wait_until(pilot, lambda: not chat.generating, what="the turn's end")
            assert not box.busy
            await pilot.press("enter")   # sent up as `Sent`: the screen starts the turn, the box is emptied
            await wait_until(pilot, lambda: len(chat.sessions) == 2, what="the second turn")
            assert box.value == "" and chat.sessions[-1].header.user_text == "another"

    run(go())
