"""The chat app drafting by prompt lookup: the decoder's child process loads the target alone, the title and
each session's header say who drafts, and copied tokens the target accepted are drawn as draft tokens."""

from __future__ import annotations

from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.session.live import LiveSource
from gammatune_tui.ui.app import make_app
from gammatune_tui.ui.widgets.stats_panel import render_stats

from uihelpers import SIZE, plain, run, wait_until

# a run of alike lines: the demo target carries it on, so prompt lookup's copies get accepted
PROMPT = "x = 1\ny = 1\nz = 1\nw = 1\nv"


def test_chat_with_prompt_lookup_in_the_decoder_process():
    src = LiveSource(PolicySettings.build("gammatune+", 4), SamplingConfig(),
                     load_kwargs={"device": "cpu", "dtype": "float32", "threads": 1,
                                  "drafter": DrafterSettings("prompt-lookup", 1, 2)}, max_new_tokens=24)

    async def scenario():
        app = make_app(src)
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, timeout=120, what="target loaded")
            assert "prompt lookup" in src.title
            await pilot.press(*PROMPT, "enter")
            await wait_until(pilot, lambda: chat.stats.summary is not None, timeout=120, what="live turn")
            header = chat.sessions[0].header
            assert header.drafter == "prompt-lookup" and header.draft == "prompt-lookup"
            assert header.drafter_params == {"ngram_min": 1, "ngram_max": 2}
            assert chat.stats.draft_calls == 0 and chat.stats.summary.drafter == "prompt-lookup"
            roles = [p.role for p in chat.transcript.wrapped.tokens]
            copied = [t for e in chat.steps for t in e.emitted if t.source == "draft" and t.text]
            assert copied and roles.count("draft") == len(copied)
            # the paper's c = T_target / T_draft has no draft to divide by: the panel says so
            panel = plain(render_stats(chat.stats))
            assert "no draft model" in panel and "draft 0" in panel

    run(scenario())
