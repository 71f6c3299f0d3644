"""The system prompt (issue 24 row 15): sent through a chat template, left out with a notice where there is none."""

from __future__ import annotations

import copy

import pytest

from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.source import Notice
from gammatune_tui.session.system_prompt import check_system_flags, fit_system, with_system

TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
NO_SYSTEM_TEMPLATE = ("{% for m in messages %}{% if m['role'] == 'system' %}"
                      "{{ raise_exception('System role not supported') }}{% endif %}{{ m['content'] }}{% endfor %}")


def _with_template(pair, template):
    """The tiny pair with a chat template on a copy of its tokenizer."""
    p = copy.copy(pair)
    p.tokenizer = copy.deepcopy(pair.tokenizer)
    p.tokenizer.chat_template = template
    return p


def test_flags_that_contradict_are_refused_before_loading():
    check_system_flags(None, True)
    check_system_flags("Be brief.", False)
    with pytest.raises(InvalidParameter, match="--system needs the chat template, and --raw"):
        check_system_flags("Be brief.", True)
    with pytest.raises(InvalidParameter, match="--system needs some text"):
        check_system_flags("  ", False)


def test_with_system_puts_one_system_message_first():
    msgs = [{"role": "user", "content": "hi"}]
    assert with_system("", msgs) == msgs
    assert with_system("S", [{"role": "system", "content": "old"}, *msgs]) == [
        {"role": "system", "content": "S"}, *msgs]


def test_a_template_pair_sends_it_and_a_completion_pair_leaves_it_out_with_a_notice(tiny_pair):
    msgs = with_system("Answer in French.", [{"role": "user", "content": "hi"}])
    templated = _with_template(tiny_pair, TEMPLATE)
    kept, notice = fit_system(templated, msgs)
    assert kept == msgs and notice == ""
    text = templated.tokenizer.decode(templated.encode_prompt(kept))
    assert "<|system|>Answer in French." in text and text.index("system") < text.index("<|user|>hi")

    kept, notice = fit_system(tiny_pair, msgs)   # no chat template: a completion model
    assert kept == [{"role": "user", "content": "hi"}]
    assert "left out" in notice and "no chat template" in notice

    kept, notice = fit_system(_with_template(tiny_pair, NO_SYSTEM_TEMPLATE), msgs)
    assert kept == [{"role": "user", "content": "hi"}] and "refuses a system message" in notice
    assert "System role not supported" in notice


def test_the_chat_source_sends_it_every_turn_and_notes_a_left_out_one_once(tiny_pair):
    templated = _with_template(tiny_pair, TEMPLATE)
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), pair=templated, max_new_tokens=4,
                     system="Be brief.")
    src.prepare(lambda *a: None)
    first = list(src.events("hello"))
    assert not any(isinstance(e, Notice) for e in first)
    assert "<|system|>Be brief." in first[0].prompt
    second = list(src.events("again"))
    assert second[0].prompt.count("<|system|>Be brief.") == 1 and "<|user|>hello" in second[0].prompt
    assert src.messages[0] == {"role": "user", "content": "hello"}   # the history holds the turns alone
    src.set_system("")
    assert "<|system|>" not in list(src.events("third"))[0].prompt

    plain = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), pair=tiny_pair, max_new_tokens=4,
                       system="Be brief.")
    plain.prepare(lambda *a: None)
    notes = [e.text for e in plain.events("def f") if isinstance(e, Notice)]
    assert len(notes) == 1 and notes[0].startswith("The system prompt is left out") and notes[0].endswith(".")
    assert not [e for e in plain.events("more") if isinstance(e, Notice)]   # said once, not every turn
    plain.set_system("Other.")
    assert [e for e in plain.events("again") if isinstance(e, Notice)]    # a new one is said again
