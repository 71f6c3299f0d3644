"""The load's time by stage is reachable at 80×24: a shorter subtitle, a line under the welcome text, a palette entry.

At 80 columns the header cut "demo pair · static runner · loaded in 9.8 s:
imports …" before the stages; at 160 the whole line fits and no notice is
needed.
"""

from __future__ import annotations

from gammatune_tui.engine.loading.load_stages import load_stages_text
from gammatune_tui.ui.screens.chat_subtitle import fit_subtitle, split_load

from uihelpers import SyntheticSource, make_app, plain, run, wait_until

STAGES = {"imports": 4.1, "tokenizer": 0.3, "weights": 2.0, "self-checks": 2.9, "warm-up": 0.8}
TITLE = f"HuggingFaceTB/SmolLM2-135M-Instruct + prompt lookup · static runner · {load_stages_text(STAGES)}"


def test_the_subtitle_parts_follow_the_load_stages_text():
    name, total, stages = split_load(TITLE)
    assert name == "HuggingFaceTB/SmolLM2-135M-Instruct + prompt lookup · static runner"
    assert total == "loaded in 10.1 s" and stages == "imports 4.1 · tokenizer 0.3 · weights 2.0 · self-checks 2.9 · warm-up 0.8 s"
    assert fit_subtitle(TITLE, 200) == TITLE
    assert fit_subtitle(TITLE + " · 40 tokens · end of turn", 150) == f"{name} · {total} · 40 tokens · end of turn"
    # at 80 columns SmolLM2's name alone filled the header, and the total was cut (issue 24): the runner,
    # then the start of the name give way, never the total
    for width, shown in ((100, "HuggingFaceTB/SmolLM2-135M-Instruct + prompt lookup · loaded in 10.1 s"),
                         (80, "…-135M-Instruct + prompt lookup · loaded in 10.1 s")):
        assert fit_subtitle(TITLE, width) == shown
        assert len("gammatune") + 3 + len(shown) <= width - 18
    assert fit_subtitle(TITLE + " · 40 tokens · end of turn", 80) == "…-135M-Instruct + prompt lookup · loaded in 10.1 s"
    demo = f"demo pair · static runner · {load_stages_text(STAGES)} · 256 tokens · reached the token limit"
    assert fit_subtitle(demo, 80) == "demo pair · static runner · loaded in 10.1 s"   # the tokens give way first


def _messages(app):
    return [f"{n.title}: {n.message}" for n in app._notifications]


def test_the_load_stages_are_reachable_at_80x24_and_shown_whole_at_160x48():
    title = f"demo pair · static runner · {load_stages_text(STAGES)}"

    async def scenario(size):
        source = SyntheticSource(steps=3)
        source.title = title
        app = make_app(source)
        async with app.run_test(size=size) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await pilot.pause(0.1)
            stages = "imports 4.1 · tokenizer 0.3 · weights 2.0 · self-checks 2.9 · warm-up 0.8 s"
            if size[0] == 80:
                # the header shows the pair and the total; the stages are under the welcome text, where an
                # 8-second notice used to cover that text (issue 40 row 13): no notice at all after loading
                assert chat.sub_title.endswith("static runner · loaded in 10.1 s") and "imports" not in chat.sub_title
                welcome = " ".join(plain(chat.query_one("#welcome"), width=78).split())
                assert f"Loaded in 10.1 s: {stages} (Ctrl+P: Show load times)" in welcome
                assert _messages(app) == []
                chat.action_show_load_times()   # the palette's "Show load times", any time later
                await pilot.pause(0.1)
                assert any(stages in m for m in _messages(app))
                assert "Show load times" in [c.title for c in chat.system_commands()]
            else:
                assert chat.sub_title == title
                assert not any("imports" in m for m in _messages(app))
                assert "Loaded in" not in plain(chat.query_one("#welcome"))   # said once, in the title

    for size in ((80, 24), (160, 48)):
        run(scenario(size))


def test_a_pace_in_the_title_refits_the_subtitle_so_the_total_stays():
    """F9 put "· pace 10 steps/s" in the title and the header cut the subtitle's load total (issue 24)."""
    title = f"demo pair · static runner · {load_stages_text(STAGES)}"

    async def scenario():
        source = SyntheticSource(steps=3)
        source.title = title
        source.pace = 0.0
        source.set_pace = lambda p: setattr(source, "pace", p)
        app = make_app(source)
        async with app.run_test(size=(80, 24)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="ready")
            await pilot.press("f9")
            await pilot.pause()
            assert chat.title == "gammatune · pace 10 steps/s"
            assert chat.sub_title == "demo pair · loaded in 10.1 s"
            assert len(chat.title) + 3 + len(chat.sub_title) <= 80 - 18

    run(scenario())
