"""LiveSource on a tiny random-weight pair: multi-turn history, mid-generation requests, the app end to end."""

from __future__ import annotations

from gammatune_tui.engine.runners import runner_pool
from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.source import EventSource
from gammatune_tui.ui.app import make_app

from uihelpers import SIZE, run, wait_until


def test_turns_carry_the_history_and_requests_apply_at_the_next_step(tiny_pair):
    src = LiveSource(PolicySettings.build("gammatune", 3), SamplingConfig(), pair=tiny_pair, max_new_tokens=24)
    assert isinstance(src, EventSource)
    stages = []
    src.prepare(lambda stage, frac: stages.append((stage, frac)))
    assert stages[-1] == ("ready", 1.0)
    # plain target decoding is timed where the models are, once they are loaded: the chat's speed is set against it
    assert ("timing plain target decoding", 1.0) in stages
    assert src.plain_speed is not None and src.plain_speed.tokens_per_s > 0
    assert src.plain_speed.sampling == "greedy" and src.plain_speed.when == "at load"
    # the subtitle says which runner the sessions use (tiny_pair is warmed up by its fixture or not at all)
    assert f"{runner_pool(tiny_pair).label} runner" in src.title

    events = []
    for ev in src.events("hello"):
        events.append(ev)
        steps = [e for e in events if isinstance(e, StepEvent)]
        if len(steps) == 2 and len(events) == 3:
            src.request(settings=PolicySettings.build("specdecode", 2))
    header, *steps, summary = events
    assert isinstance(header, SessionHeader) and isinstance(summary, SessionSummary)
    assert header.user_text == "hello" and header.turn == 0
    assert [s.method for s in steps[:2]] == ["gammatune", "gammatune"]
    assert steps[2].method == "specdecode" and steps[2].settings_changed and steps[2].gamma == 2
    reply = "".join(t.text for s in steps for t in s.emitted)
    assert src.messages == [{"role": "user", "content": "hello"}, {"role": "assistant", "content": summary.text or reply}]

    assert src.plain_speed.when == "at load"   # the same sampling: not timed again
    src.request(sampling=SamplingConfig(temperature=0.7, top_p=0.9))
    second = list(src.events("again"))
    # a sampled step costs differently: timed again after the turn that first ran sampled
    assert src.plain_speed.when == "after turn 2" and src.plain_speed.sampling == "T 0.7, top-p 0.9"
    h2 = second[0]
    assert h2.turn == 1 and h2.user_text == "again"
    assert len(h2.prompt_ids) > len(header.prompt_ids) + len(reply.encode()) // 2   # the history went along
    assert len(src.messages) == 4


def test_chat_app_runs_a_live_turn_with_progress(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    src = LiveSource(PolicySettings.build("gammatune+", 4), SamplingConfig(temperature=0.7, top_p=0.9, seed=1),
                     load_kwargs={"target": str(t), "draft": str(d), "device": "cpu", "dtype": "float32",
                                  "threads": 1}, max_new_tokens=20)

    async def scenario():
        app = make_app(src)
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, timeout=120, what="models loaded")
            await pilot.press(*"def ", "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, timeout=120, what="live turn")
            assert chat.stats.summary.tokens >= 1 and chat.steps
            assert chat.sessions[0].header.user_text == "def "
            assert chat.transcript.token_count > 1

    run(scenario())


def test_decoder_process_streams_applies_requests_and_stops(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    src = LiveSource(PolicySettings.build("gammatune", 3), SamplingConfig(),
                     load_kwargs={"target": str(t), "draft": str(d), "device": "cpu", "dtype": "float32",
                                  "threads": 1}, max_new_tokens=40)
    assert src.process
    stages = []
    try:
        src.prepare(lambda stage, frac: stages.append(stage))
        assert stages[0] == "starting the model process" and stages[-1] == "ready" and "target" in stages
        assert src.plain_speed is not None and src.plain_speed.tokens_per_s > 0   # timed in the child, sent back
        events = []
        for ev in src.events("hello"):
            events.append(ev)
            if sum(isinstance(e, StepEvent) for e in events) == 2 and isinstance(ev, StepEvent):
                src.request(settings=PolicySettings.build("specdecode", 2))
        steps = [e for e in events if isinstance(e, StepEvent)]
        assert isinstance(events[0], SessionHeader) and isinstance(events[-1], SessionSummary)
        changed = [i for i, s in enumerate(steps) if s.settings_changed]
        assert len(changed) == 1 and changed[0] >= 2                    # applied at a later step boundary
        assert all(s.method == "gammatune" for s in steps[:changed[0]])
        assert all(s.method == "specdecode" for s in steps[changed[0]:])
        assert src.messages[0] == {"role": "user", "content": "hello"} and len(src.messages) == 2
        # stop: the turn ends cleanly with a summary
        second = []
        for ev in src.events("again"):
            second.append(ev)
            if isinstance(ev, StepEvent):
                src.stop()
        assert second[-1].stop_reason == "stopped" and second[0].turn == 1
        assert sum(isinstance(e, StepEvent) for e in second) <= 3
    finally:
        src.close()
    assert src.link._proc is None
