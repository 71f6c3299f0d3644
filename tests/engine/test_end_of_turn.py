"""The token that ends a turn stops the session and is never text: the ids stay in the events."""

from __future__ import annotations

import dataclasses

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.common.end_of_turn import collect_eos_ids
from gammatune_tui.engine.events import SessionSummary, StepEvent
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.events.text_pieces import SingleTokenText, TextPieces


def _session(pair, prompt, n):
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig(temperature=0.0))
    events = list(dec.generate(prompt, max_new_tokens=n))
    steps = [e for e in events if isinstance(e, StepEvent)]
    return steps, events[-1]


def test_an_end_of_turn_id_ends_the_answer_and_shows_no_text(tiny_pair):
    steps, summary = _session(tiny_pair, "abcabc", 12)
    ids = [t.id for s in steps for t in s.emitted]
    stop = ids[4]   # make the fifth token the pair's end of turn
    pair = dataclasses.replace(tiny_pair, eos_ids=frozenset({stop}))
    steps, summary = _session(pair, "abcabc", 12)
    emitted = [t for s in steps for t in s.emitted]
    assert isinstance(summary, SessionSummary) and summary.stop_reason == "eos"
    assert [t.id for t in emitted] == ids[:ids.index(stop) + 1]       # the id is in the events
    assert emitted[-1].text == ""                                        # …but not as text
    assert summary.text == tiny_pair.tokenizer.decode(ids[:ids.index(stop)])
    assert "".join(t.text for t in emitted) == summary.text
    assert all(d.text == "" for s in steps for d in s.drafted if d.id == stop)


def test_text_pieces_hide_the_ids_they_are_told(tiny_pair):
    tok = tiny_pair.tokenizer
    eos = tok.eos_token_id
    pieces = TextPieces(tok, hidden={eos})
    shown = [pieces.push(i) for i in tok("hi").input_ids[1:] + [eos]]
    assert shown[-1] == "" and "".join(shown) == "hi"
    assert SingleTokenText(tok, hidden={eos})(eos) == "" and SingleTokenText(tok)(eos) == tok.eos_token


class _Tok:
    eos_token_id = 5
    all_special_tokens = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|eos|>"]
    all_special_ids = [1, 2, 0, 5]


class _Model:
    class generation_config:
        eos_token_id = [5, 7]

    class config:
        eos_token_id = 5


def test_every_eos_and_end_of_turn_id_is_collected():
    # the generation config's list, the tokenizer's EOS and ChatML's end-of-turn; not <|im_start|>
    assert collect_eos_ids(_Tok(), _Model()) == frozenset({5, 7, 2, 0})
