"""A chat that outgrows the models' context keeps its most recent turns, and says so."""

from __future__ import annotations


import pytest

from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.session.context import fit_conversation
from gammatune_tui.session.system_prompt import prompt_format
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.source import Notice


def _encode(messages):
    """One token per character, plus one per message (a chat template's markers)."""
    return [0] * sum(len(m["content"]) + 1 for m in messages)


def _chat(*turns):
    out = []
    for i, text in enumerate(turns):
        out.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return out


def test_a_conversation_that_fits_goes_whole():
    msgs = _chat("a" * 10, "b" * 10, "c" * 10)
    fit = fit_conversation(msgs, _encode, 20, limit=100)
    assert len(fit.ids) == 33 and fit.max_new_tokens == 20 and fit.dropped_turns == 0 and fit.notice == ""
    assert fit_conversation(msgs, _encode, 10**12, limit=None).max_new_tokens == 10**12   # no limit known


def test_the_oldest_turns_give_way_first():
    msgs = _chat("a" * 40, "b" * 40, "c" * 40, "d" * 40, "e" * 9)    # 2 old exchanges and the new message
    fit = fit_conversation(msgs, _encode, 20, limit=120)
    assert fit.dropped_turns == 1 and len(fit.ids) == 41 + 41 + 10 and fit.max_new_tokens == 20
    assert "outgrown the model's 120-token context" in fit.notice and "oldest turn is left out" in fit.notice
    fit = fit_conversation(msgs, _encode, 100, limit=120)
    assert fit.dropped_turns == 2 and len(fit.ids) == 10 and "2 oldest turns are left out" in fit.notice


def test_the_reply_gets_what_is_left_and_a_message_too_long_is_refused():
    fit = fit_conversation(_chat("x" * 90), _encode, 256, limit=100)
    assert fit.max_new_tokens == 9 and "Only 9 tokens of the 100-token context are left" in fit.notice
    with pytest.raises(InvalidParameter, match="your message is 100 tokens .* context holds 100"):
        fit_conversation(_chat("old", "reply", "x" * 99), _encode, 10, limit=100)


def test_the_too_long_line_names_the_format_the_message_was_counted_in(tiny_pair):
    """Raw text (the demo pair, --raw) was never wrapped in a chat template: the line must not say it was."""
    with pytest.raises(InvalidParameter, match=r"^your message is 100 tokens, and the model's context"):
        fit_conversation(_chat("x" * 99), _encode, 10, limit=100, wrapped_in=prompt_format(tiny_pair, raw=True))
    with pytest.raises(InvalidParameter, match=r"^your message is 100 tokens with the chat template, and"):
        fit_conversation(_chat("x" * 99), _encode, 10, limit=100)
    assert prompt_format(tiny_pair, raw=True) == ""


def test_a_live_chat_past_the_context_keeps_the_recent_turns_and_says_so(tiny_pair, monkeypatch):
    for model in (tiny_pair.target, tiny_pair.draft):
        monkeypatch.setattr(model.config, "max_position_embeddings", 96)
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), pair=tiny_pair, max_new_tokens=24,
                     raw=True)
    src.prepare(lambda *_: None)
    first = list(src.events("first " * 5))
    assert not any(isinstance(e, Notice) for e in first)
    second = list(src.events("second " * 5))
    assert isinstance(second[0], Notice) and "oldest turn is left out" in second[0].text
    header = second[1]
    assert isinstance(header, SessionHeader)
    assert len(header.prompt_ids) + header.max_new_tokens <= 96        # never past the models' positions
    assert "first" not in header.prompt and header.prompt.removeprefix("<s>").startswith("second")
    assert isinstance(second[-1], SessionSummary) and any(isinstance(e, StepEvent) for e in second)
    assert [m["content"].split()[0] for m in src.messages[::2]] == ["first", "second"]   # the history is kept
    with pytest.raises(InvalidParameter, match="context holds 96"):
        list(src.events("x" * 200))
