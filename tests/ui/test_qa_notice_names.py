"""Pilot test: the notice after changing a control names it as the screen does (γ0, η, γ max), not by its internal name.

Found in tmux at 80×24: Tab to γ0, Enter mid-answer → "gamma0: applies at the next step".
"""

from __future__ import annotations

from uihelpers import gated_chat, run, wait_until


def test_changing_a_control_mid_answer_names_it_in_the_screens_words():
    async def scenario():
        async with gated_chat(released=2) as (src, pilot, chat):
            app = chat.app
            for name, shown in (("gamma0", "γ0"), ("gamma_max", "γ max"), ("eta", "η")):
                field = chat.query_one(f"#ctl-{name}")
                field.action_step(1)
                await wait_until(pilot, lambda: any("applies at the next step" in str(n.message)
                                                    and shown in str(n.message) for n in app._notifications),
                                 what=f"the notice for {shown}")
            messages = " ".join(str(n.message) for n in app._notifications)
            assert "gamma" not in messages and "eta" not in messages, messages
            src.gate.release(100)

    run(scenario())
