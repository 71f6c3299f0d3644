"""The chat's drafter switch: between turns, model / self:int8 / self:int4 / prompt lookup, with a notice while built.

Each answer stays the target's own (greedy: the same tokens whichever drafter drafted them).
"""

from __future__ import annotations

from gammatune_tui.engine import PolicySettings, SamplingConfig
from gammatune_tui.engine.events import SessionHeader, StepEvent
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.source import Notice


def _turn(src, prompt):
    items = list(src.events(prompt))
    notes = [i.text for i in items if isinstance(i, Notice)]
    head = next(i for i in items if isinstance(i, SessionHeader))
    ids = [t.id for i in items if isinstance(i, StepEvent) for t in i.emitted]
    return notes, head, ids


def test_switching_drafters_between_turns_keeps_the_answer_the_targets(tiny_pair):
    src = LiveSource(sampling=SamplingConfig(temperature=0.0), pair=tiny_pair, max_new_tokens=12, raw=True, process=False)
    src.prepare(lambda stage, frac: None)
    _, head, want = _turn(src, "abc")
    assert head.draft_precision == "float32"   # the pair's own draft model
    for name, draft in (("self:int4", "self:int4"), ("prompt-lookup", "prompt-lookup"), ("self:int8", "self:int8"),
                        ("model", head.draft)):
        src.messages = []   # the same single-turn prompt each time: its greedy answer must not change
        src.set_drafter(name)
        notes, h, ids = _turn(src, "abc")
        assert notes[-1] == f"drafting with {name} from this answer on"
        assert any(n.startswith(f"building {name}") for n in notes) == name.startswith("self:")
        assert h.draft == draft and ids == want
    src.messages = []
    notes, h, ids = _turn(src, "abc")   # no switch asked: no notice, the same drafter
    assert notes == [] and h.draft == head.draft


def test_a_control_changed_after_the_pick_applies_to_the_new_drafter(tiny_pair):
    """Pick a drafter, then change the method before the next prompt: the new decoder runs the new method."""
    src = LiveSource(PolicySettings.build("specdecode", 4), SamplingConfig(temperature=0.0), pair=tiny_pair,
                     max_new_tokens=6, raw=True, process=False)
    src.prepare(lambda stage, frac: None)
    _turn(src, "abc")
    src.set_drafter("prompt-lookup")
    src.request(settings=PolicySettings.build("gammatune", 3))
    notes, h, _ = _turn(src, "abc")
    assert notes[-1] == "drafting with prompt-lookup from this answer on"
    assert h.method == "gammatune" and h.gamma0 == 3


def test_a_bad_drafter_is_a_notice_and_the_old_one_stays(tiny_pair):
    src = LiveSource(sampling=SamplingConfig(temperature=0.0), pair=tiny_pair, max_new_tokens=6, raw=True, process=False)
    src.prepare(lambda stage, frac: None)
    src.set_drafter("self:int3")
    notes, h, _ = _turn(src, "abc")
    assert len(notes) == 1 and "unknown self-draft" in notes[0]
    assert h.draft == tiny_pair.name_draft


def test_the_switch_reaches_a_decoder_in_its_own_process(tiny_pair_dirs):
    t, d = map(str, tiny_pair_dirs)
    src = LiveSource(sampling=SamplingConfig(temperature=0.0), max_new_tokens=8, raw=True, process=True,
                     load_kwargs={"target": t, "draft": d, "device": "cpu", "dtype": "float32", "threads": 1})
    try:
        src.prepare(lambda stage, frac: None)
        _, head, want = _turn(src, "abc")
        src.messages = []
        src.set_drafter("self:int4")
        notes, h, ids = _turn(src, "abc")
        assert notes[-1] == "drafting with self:int4 from this answer on"
        assert h.draft == "self:int4" and h.draft_precision == "int4 g32" and ids == want
    finally:
        src.close()


def test_the_switch_returns_its_decoder_and_none_when_it_cannot(tiny_pair):
    """`switch_drafter` hands back the decoder it built (no out-list to append to); None leaves the old one."""
    from gammatune_tui.session.turns import drain, switch_drafter

    sampling, settings = SamplingConfig(temperature=0.0), PolicySettings.build("specdecode", 4)
    notes: list[Notice] = []
    decoder = drain(switch_drafter(tiny_pair, "prompt-lookup", settings, sampling), notes.append)
    assert decoder is not None and decoder.drafter.name == "prompt-lookup"
    assert [n.text for n in notes] == ["drafting with prompt-lookup from this answer on"]
    notes.clear()
    assert drain(switch_drafter(tiny_pair, "self:int3", settings, sampling), notes.append) is None
    assert len(notes) == 1 and notes[0].severity == "error"
