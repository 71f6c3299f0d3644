"""The transcript says who wrote what (You / Assistant), `/system TEXT` sets the system prompt, wrapped lines start clean."""

from __future__ import annotations

import copy

from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.session.live import LiveSource
from gammatune_tui.ui.widgets.transcript_layout import Piece, TranscriptLayout

from uihelpers import SyntheticSource, make_app, run, wait_until

TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def _templated(pair):
    p = copy.copy(pair)
    p.tokenizer = copy.deepcopy(pair.tokenizer)
    p.tokenizer.chat_template = TEMPLATE
    return p


def _lines(chat) -> list[str]:
    return chat.transcript.plain_text().split("\n")


def test_a_chat_model_s_turns_are_labelled_you_and_assistant_and_system_sets_the_system_prompt(tiny_pair):
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), pair=_templated(tiny_pair),
                     max_new_tokens=6, system="Be brief.")

    async def scenario():
        app = make_app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, timeout=60, what="ready")
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, timeout=60, what="turn 1")
            lines = _lines(chat)
            assert "System: Be brief." in lines
            you = lines.index("You")
            assert lines[you + 1] == "hello" and lines[you + 2] == "Assistant"
            await pilot.press(*"/system Answer in French.", "enter")
            assert src.system == "Answer in French."
            assert chat.query_one("#prompt").value == "" and len(chat.sessions) == 1   # not sent as a prompt
            await pilot.press(*"again", "enter")
            await wait_until(pilot, lambda: len(chat.sessions) == 2 and chat.stats.summary is not None,
                             timeout=60, what="turn 2")
            assert "<|system|>Answer in French." in chat.stats.header.prompt
            assert "System: Answer in French." in _lines(chat)
            await pilot.press(*"/system", "enter")
            assert src.system == ""

    run(scenario())


def test_a_completion_model_s_prompt_is_labelled_and_its_continuation_joins_it():
    async def scenario():
        app = make_app(SyntheticSource(steps=3), prompt="def area(w, h):")
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None, what="the answer")
            lines = _lines(chat)
            at = lines.index("You · the model continues your text")
            assert lines[at + 1].startswith("def area(w, h):")   # the continuation goes on after the prompt
            assert "Assistant" not in lines
            await pilot.press(*"/system Be brief.", "enter")   # a source without system prompts says so
            assert chat.query_one("#prompt").value == ""

    run(scenario())


def test_a_word_wrapped_to_the_next_line_leaves_its_space_behind():
    layout = TranscriptLayout(width=18)
    for word in ("hello", " world", " again", " and", " more"):
        layout.add(Piece(word, "draft", 0))
    shown = ["".join(p.text for p in line) for line in layout.lines]
    assert shown == ["hello world again ", "and more"]
    assert not any(line.startswith(" ") for line in shown)
    assert "".join(p.text for p in layout.tokens) == "hello world again and more"   # the text is unchanged


def test_a_long_note_wraps_between_words():
    """The system-prompt notice was cut mid-word ("the text yo" / "u send") at the transcript's edge."""
    from textual.app import App, ComposeResult

    from gammatune_tui.ui.widgets.token_stream import TokenStream

    note = ("⚠ The system prompt is left out: the demo pair has no chat template (it continues the text you "
            "send, so there is no place for a system message).")

    class A(App):
        def compose(self) -> ComposeResult:
            yield TokenStream()

    async def scenario():
        app = A()
        async with app.run_test(size=(80, 10)) as pilot:
            ts = app.query_one(TokenStream)
            ts.add_line(note)
            await pilot.pause()
            shown = ["".join(p.text for p in line).rstrip() for line in ts.wrapped.lines if line]
            assert " ".join(shown) == note and len(shown) == 2
            words = set(note.split())
            assert all(line.split()[-1] in words and line.split()[0] in words for line in shown), shown
            assert ts.plain_text().strip() == note

    run(scenario())


def test_system_on_a_pair_without_a_chat_template_says_at_once_that_none_is_set(tiny_pair):
    """`/system` on a completion model said "System prompt set", and the next turn said "left out"."""
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), pair=tiny_pair, max_new_tokens=4)

    async def scenario():
        app = make_app(src)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, timeout=60, what="ready")
            await pilot.press(*"/system Be brief.", "enter")
            await pilot.pause()
            notices = [n.message for n in app._notifications]
            assert any(m.startswith("No system prompt set: ") and "has no chat template" in m for m in notices), notices
            assert not any("System prompt set" in m for m in notices) and src.system == ""
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, timeout=60, what="turn 1")
            assert not any("left out" in n.message for n in app._notifications)

    run(scenario())
