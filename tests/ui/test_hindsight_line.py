"""The chat's statistics panel gets one line after a greedy turn: how close it came to the oracle."""

from __future__ import annotations

from gammatune_tui.bench.sim.hindsight import session_hindsight
from gammatune_tui.engine.events import DraftedToken, EmittedToken, StepEvent, TargetToken
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.session.hindsight import Hindsight, sampled_session
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.stats import RunningStats
from gammatune_tui.ui.app import make_app
from gammatune_tui.ui.widgets.stats_panel import render_stats

from uihelpers import SIZE, plain, run, wait_until


def _step(i: int) -> StepEvent:
    d = [DraftedToken(k, "t", 0.9, 0.9, 0.9) for k in range(4)]
    em = [EmittedToken(k, "t", "draft") for k in range(3)] + [EmittedToken(99, "x", "target")]
    return StepEvent(step=i, method="specdecode", params={}, gamma=4, drafted=d, accepted=3,
                     target_token=TargetToken(99, "x", "correction"), emitted=em, gamma_next=4, draft_s=0.004,
                     verify_s=0.010)


def test_the_panel_line_reads_the_share_or_why_there_is_none():
    s = RunningStats()
    for i in range(3):
        s.add(_step(i))
    assert "vs oracle" not in plain(render_stats(s))
    # the share is the oracle's modelled time over the session's: the line shows those two times per token, so
    # its numbers agree with it (issue 40 row 12b: "0.88 of best γ (1.83 vs 1.87 tok/step)" invited 0.98)
    s.hindsight = Hindsight(True, share=0.88, tokens=200, session_tokens_per_step=1.83, oracle_tokens_per_step=1.87,
                            session_modelled_s=8.22, oracle_modelled_s=0.88 * 8.22)
    line = " ".join(plain(render_stats(s)).split())
    assert "vs oracle 0.88 of best γ's speed (41.1 vs 36.2 ms/token, modelled)" in line
    assert "tok/step)" not in line and round(36.2 / 41.1, 2) == 0.88
    s.hindsight = Hindsight(True, share=0.8)   # no times: the ratio still says what it is
    assert "vs oracle 0.80 of best γ's modelled speed" in " ".join(plain(render_stats(s)).split())
    s.hindsight = sampled_session(0.7)
    assert "vs oracle greedy only (T=0.7)" in " ".join(plain(render_stats(s)).split())


def test_a_greedy_chat_turn_ends_with_the_oracle_line(tiny_pair):
    src = LiveSource(PolicySettings.build("specdecode", 3), SamplingConfig(), pair=tiny_pair, max_new_tokens=20,
                     hindsight=session_hindsight)

    async def scenario():
        app = make_app(src)
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, timeout=60, what="models ready")
            await pilot.press(*"def ", "enter")
            await wait_until(pilot, lambda: chat.stats.hindsight is not None, timeout=60, what="oracle check")
            assert chat.stats.hindsight.applicable
            await pilot.pause()
            assert "of best γ" in " ".join(plain(render_stats(chat.stats_panel.stats)).split())

    run(scenario())
