"""A token that ends a turn (`<|im_end|>`, EOS) is named "⟨end of turn⟩" in the step inspector, never "∅" or its raw text.

The engine gives such tokens no text (so no answer, transcript or export
shows them) and lists their ids in the session header's `end_ids`; the
inspector names them from there, in dim.
"""

from __future__ import annotations

import dataclasses

from gammatune_tui.engine.events import DraftedToken, EmittedToken, SessionHeader, StepEvent, TargetToken
from gammatune_tui.render.safe_text import END_OF_TURN_LABEL
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.synthetic import synthetic_session
from gammatune_tui.ui.app import make_replay_app
from gammatune_tui.ui.widgets.step_inspector import render_step

from uihelpers import plain, run, wait_until

EOT = 2


def _step(drafted, accepted, target, emitted):
    return StepEvent(step=3, method="gammatune+", params={}, gamma=3, drafted=drafted, accepted=accepted,
                     target_token=target, emitted=emitted, gamma_next=3, draft_s=0.001, verify_s=0.002)


def test_an_end_of_turn_token_is_named_in_the_draft_row_the_target_row_and_the_sentence():
    drafted = [DraftedToken(5, " Paris", 0.9, 0.9, 0.9), DraftedToken(6, ".", 0.8, 0.8, 0.8),
               DraftedToken(EOT, "", 0.7, 0.7, 0.7)]
    accepted_eot = _step(drafted, 3, None, [EmittedToken(5, " Paris", "draft"), EmittedToken(6, ".", "draft"),
                                            EmittedToken(EOT, "", "draft")])
    corrected_to_eot = _step(drafted[:2] + [DraftedToken(7, " The", 0.6, 0.6, 0.1)], 2,
                             TargetToken(EOT, "", "correction"),
                             [EmittedToken(5, " Paris", "draft"), EmittedToken(6, ".", "draft"),
                              EmittedToken(EOT, "", "target")])
    for ev in (accepted_eot, corrected_to_eot):
        text = plain(render_step(ev, end_ids={EOT}))
        assert END_OF_TURN_LABEL in text and "∅" not in text and "im_end" not in text
    sentence = plain(render_step(corrected_to_eot, end_ids={EOT})).splitlines()[-1]
    assert f"drafted ·The → target {END_OF_TURN_LABEL}" in sentence
    # without end_ids (a recording made before them) an empty token stays ∅
    assert "∅" in plain(render_step(accepted_eot))


def _ending_on_eot(events, listed=True):
    """A synthetic session whose last emitted token is the end-of-turn id, as a real model's answer ends
    (`listed`: the header names the id, as recordings made since `end_ids` do)."""
    out = []
    for ev in events:
        if isinstance(ev, SessionHeader) and listed:
            ev = dataclasses.replace(ev, end_ids=[EOT])
        out.append(ev)
    i = max(k for k, ev in enumerate(out) if isinstance(ev, StepEvent))
    last = out[i]
    emitted = list(last.emitted)
    emitted[-1] = EmittedToken(EOT, "", emitted[-1].source)
    tt = TargetToken(EOT, "", last.target_token.kind) if last.target_token is not None else None
    out[i] = dataclasses.replace(last, emitted=emitted, target_token=tt)
    return out, tt is not None


def test_the_replay_inspector_names_the_end_of_turn_at_80x24_and_160x48(tmp_path):
    events, by_target = _ending_on_eot(synthetic_session("gammatune+", seed=2, text="one two three four </s>"))
    assert by_target
    path = tmp_path / "rec.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(events)
    recording = read_recording(path)
    assert recording.sessions[0].header.end_ids == [EOT]   # kept through the file

    async def go(size):
        app = make_replay_app(recording, speed=0)
        async with app.run_test(size=size) as pilot:
            screen = app.screen
            await wait_until(pilot, lambda: screen.stats.summary is not None and not screen.generating,
                             what="the end")
            if size[1] < 34:
                await pilot.press("f7")          # a short screen shows the step line until F7 asks for the table
            await pilot.pause(0.3)
            assert screen.inspector.region.height > 2         # on screen, table and all
            shown = plain(screen.inspector, width=size[0])
            assert END_OF_TURN_LABEL in shown and "∅" not in shown

    for size in ((80, 24), (160, 48)):
        run(go(size))


def test_a_live_session_header_lists_the_pairs_end_of_turn_ids(tiny_pair):
    from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder, make_policy

    decoder = SpeculativeDecoder(tiny_pair, make_policy("specdecode", gamma0=2), SamplingConfig())
    header = next(iter(decoder.generate("ab", max_new_tokens=2)))
    assert isinstance(header, SessionHeader) and tiny_pair.eos_ids
    assert header.end_ids == sorted(tiny_pair.eos_ids)
    assert SessionHeader.to_json(header)["end_ids"] == header.end_ids


def test_a_recording_made_before_end_ids_names_the_token_its_answer_ended_on(tmp_path):
    events, _ = _ending_on_eot(synthetic_session("gammatune+", seed=2, text="one two three four </s>"), listed=False)
    path = tmp_path / "old.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(events)
    recording = read_recording(path)
    assert recording.sessions[0].header.end_ids == []

    async def go():
        app = make_replay_app(recording, speed=0)
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen
            await wait_until(pilot, lambda: screen.stats.summary is not None and not screen.generating,
                             what="the end")
            await pilot.pause(0.3)
            assert END_OF_TURN_LABEL in plain(screen.inspector, width=160)

    run(go())
