"""The compare screen: measuring with a progress line, the race, restart, and the summary = pane stats."""

from __future__ import annotations

import asyncio
import threading
from contextlib import asynccontextmanager

from gammatune_tui.engine.policies import METHODS, PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig
from gammatune_tui.session.compare import MethodRun
from gammatune_tui.session.compare_job import CompareJob
from gammatune_tui.session.synthetic import SyntheticSource, synthetic_session
from gammatune_tui.ui.app import make_compare_app, make_compare_replay_app
from gammatune_tui.ui.screens.compare import CompareScreen

from uihelpers import emitted_text as _text, plain, wait_until


async def _until(pilot, pred, timeout=30.0):
    await wait_until(pilot, pred, timeout, what="condition")


def _gated_compare(prompt: str, max_new_tokens: int):
    """specdecode, gammatune, gammatune+ measured live, gammatune held until the test sets the gate."""
    gate = threading.Event()

    class Gated(SyntheticSource):
        def generate(self, prompt=None, max_new_tokens=None, **kw):
            if self.label == "gammatune":
                gate.wait(30)   # hold the second method so the progress line can be read
            yield from super().generate(prompt, max_new_tokens, **kw)

    job = CompareJob(["specdecode", "gammatune", "gammatune+"], PolicySettings(), SamplingConfig(), prompt,
                     max_new_tokens, factory=lambda s, samp, label: Gated(s, samp, label=label), warmup_tokens=0,
                     repeats=1)
    app = make_compare_app(job, speed=0)
    return gate, job, app.main_screen, app


@asynccontextmanager
async def _measuring_second(app, screen):
    """The running app while the gate holds the second method (gammatune): yields the pilot."""
    async with app.run_test(size=(150, 45)) as pilot:
        progress = screen.query_one("#progress")
        await _until(pilot, lambda: "measuring 2/3: gammatune" in str(progress.render()))
        yield pilot


def test_live_compare_measures_each_method_then_races_and_summarises():
    gate, job, screen, app = _gated_compare("prompt", 60)

    async def go():
        async with _measuring_second(app, screen) as pilot:
            assert screen.measuring and screen.race.races == 0 and len(screen.runs) == 1
            assert screen.panes[0].run is not None and screen.panes[1].run is None
            gate.set()
            await _until(pilot, lambda: screen.summary is not None and not screen.race.racing and screen.race.races == 1)
            assert [r.label for r in screen.runs] == ["specdecode", "gammatune", "gammatune+"]
            for pane in screen.panes:
                assert pane.done and pane.place is not None
                assert _text(pane.run.events) in pane.transcript.plain_text()
                # the summary's numbers are the pane's own stats
                row = screen.summary.row(pane.label)
                assert row.tokens_per_s == pane.stats.tokens_per_s
                assert row.acceptance_rate == pane.stats.acceptance_rate
                assert row.tokens_per_step == pane.stats.tokens_per_step
                assert (row.target_calls, row.draft_calls) == (pane.stats.target_calls, pane.stats.draft_calls)
            # finishing order = ranking by measured tokens/s (all produce the same number of tokens)
            assert screen.race.finish_order == [r.label for r in screen.summary.rows]
            assert screen.summary.lossless.identical
            summary_text = plain(screen.query_one("#summary").content, width=150)
            assert "lossless: every method produced the same tokens" in summary_text
            for label in job.methods:
                assert label in summary_text

    asyncio.run(go())


def test_race_plays_at_measured_pace_and_restarts():
    runs = [MethodRun.from_events(synthetic_session(m, seed=4)) for m in ("specdecode", "gammatune+")]
    app = make_compare_replay_app(runs, speed=1.0, paused=True)

    async def go():
        async with app.run_test(size=(140, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            await pilot.pause(0.1)
            assert screen.race.racing and screen.race_paused
            # drive race time by hand: at half of the faster one's time, neither is done
            totals = [c.total_s for c in screen.race.contestants]
            fast, slow = (screen.panes[totals.index(f(totals))] for f in (min, max))
            screen._show_race(screen.race.advance_to(min(totals) / 2))
            assert 0 < fast.fed < len(fast.run.events) and not slow.done
            screen._show_race(screen.race.advance_to(min(totals)))
            assert fast.done and not slow.done and fast.place == 0
            await pilot.press("e")
            assert slow.done and screen.race.finish_order == [fast.label, slow.label]
            assert not screen.race.racing
            await pilot.press("r")
            assert screen.race.races == 2 and screen.race.racing and not any(p.done for p in screen.panes)
            assert screen.panes[0].transcript.plain_text().count(_text(runs[0].events)) == 0

    asyncio.run(go())


def test_race_is_scaled_to_last_a_few_seconds():
    runs = [MethodRun.from_events(synthetic_session(m)) for m in METHODS]
    app = make_compare_replay_app(runs, speed=1.0, paused=True)

    async def go():
        async with app.run_test(size=(160, 45)) as pilot:
            screen = app.screen
            await pilot.pause(0.05)
            longest = max(c.total_s for c in screen.race.contestants)
            assert longest < 1.0  # synthetic runs are fast ...
            assert screen.race.rate * 4.0 == __import__("pytest").approx(longest)  # ... so the race is slowed to 4 s

    asyncio.run(go())


def test_escape_while_measuring_skips_the_remaining_methods():
    gate, job, screen, app = _gated_compare("p", 40)

    async def go():
        async with _measuring_second(app, screen) as pilot:
            await pilot.press("escape")
            gate.set()
            await _until(pilot, lambda: not screen.measuring and screen.race.races == 1 and not screen.race.racing)
            assert [r.label for r in screen.runs] == ["specdecode", "gammatune"]
            assert screen.panes[2].run is None and screen.panes[2].place is None
            assert sorted(screen.race.finish_order) == ["gammatune", "specdecode"]

    asyncio.run(go())


def test_live_compare_with_repeats_shows_the_spread_ranking_and_target_only_row():
    from gammatune_tui.engine.plain import PlainRun

    plain_calls = []

    def target_only(sampling, max_new_tokens):
        plain_calls.append(max_new_tokens)
        return PlainRun(list(range(max_new_tokens)), max_new_tokens / 50.0)   # 50 tok/s

    job = CompareJob(["specdecode", "gammatune+"], PolicySettings(), SamplingConfig(), "p", 30,
                     factory=lambda s, samp, label: SyntheticSource(s, samp, label=label), warmup_tokens=0,
                     repeats=3, plain=target_only)
    app = make_compare_app(job, speed=0)
    screen = app.main_screen

    async def go():
        async with app.run_test(size=(150, 45)) as pilot:
            await _until(pilot, lambda: screen.summary is not None and not screen.race.racing and screen.race.races == 1)
            assert plain_calls == [30, 30, 30]
            s = screen.summary
            assert s.ranked and s.runs == 3 and s.row("target-only").reference
            assert [p.run.speeds for p in screen.panes] == [r.speeds for r in job.runs]
            text = plain(screen.query_one("#summary").content, width=150)
            assert "median of 3 runs" in text and "target-only" in text and "× target" in text and "spread" in text
            progress = str(screen.query_one("#progress").render())
            assert "race over: fastest median" in progress

    asyncio.run(go())


def test_copy_keys_on_the_compare_screen_copy_the_method_in_view_and_every_answer():
    """Ctrl+Y copies the answer of the pane in view (the leftmost, or the one clicked), Ctrl+T each method's
    answer under its name; at 80×24 (two panes a page) and 160×48, with the entries in the palette."""
    from gammatune_tui.engine.events import StepEvent
    from gammatune_tui.render.plain_text import answer_text

    texts = {"specdecode": "alpha beta ", "gammatune": "gamma [delta] ", "gammatune+": "eps zeta "}
    runs = []
    for label, text in texts.items():
        run = MethodRun(label)
        for ev in synthetic_session(label, seed=1, text=text):
            run.add(ev)
        runs.append(run)

    def answer(run):
        return answer_text([e for e in run.events if isinstance(e, StepEvent)], run.summary)

    async def go(size):
        app = make_compare_replay_app(runs, speed=0)
        async with app.run_test(size=size) as pilot:
            screen = app.screen
            await _until(pilot, lambda: screen.summary is not None)
            await pilot.press("ctrl+y")
            assert app.clipboard == answer(runs[0]) and "alpha beta" in app.clipboard
            await pilot.press("3")       # gammatune+ into view (at 80 columns beside gammatune)
            await pilot.press("ctrl+y")
            assert app.clipboard == answer(runs[2]) and "eps zeta" in app.clipboard
            screen.panes[1].transcript.focus()  # a click on gammatune's transcript
            await pilot.pause()
            await pilot.press("ctrl+y")
            assert app.clipboard == answer(runs[1]) and "gamma [delta]" in app.clipboard
            await pilot.press("ctrl+t")
            assert app.clipboard == ("── specdecode ──\nalpha beta\n\n── gammatune ──\ngamma [delta]\n\n"
                                     "── gammatune+ ──\neps zeta\n")
            titles = [c.title for c in screen.system_commands()]
            assert "Copy answer" in titles and "Copy every answer" in titles

    for size in ((80, 24), (160, 48)):
        asyncio.run(go(size))
