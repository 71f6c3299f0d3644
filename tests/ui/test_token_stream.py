"""The transcript widget: literal rendering of hostile tokens, incremental appends, 20,000 tokens."""

from __future__ import annotations

from textual.app import App, ComposeResult

from gammatune_tui.engine.events import (
    DraftedToken, EmittedToken, SessionHeader, SessionSummary, StepEvent, TargetToken,
)
from gammatune_tui.render.safe_text import printable, token_label
from gammatune_tui.session.recording import RecordedSession, Recording
from gammatune_tui.ui.app import make_replay_app
from gammatune_tui.ui.widgets.step_inspector import render_step
from gammatune_tui.ui.widgets.token_stream import TokenStream

from uihelpers import SIZE, plain, run, wait_until

HOSTILE = ["[bold red]x[/]", "\x1b[31m", "\x07", "\r", "[link=http://evil]y[/link]", "\x1b]0;title\x07",
           "\u202eevil", "<script>alert(1)</script>", "\x9b2J"]


class StreamApp(App):
    def compose(self) -> ComposeResult:
        yield TokenStream(id="ts")


def _line_text(ts: TokenStream, y: int) -> str:
    return "".join(seg.text for seg in ts.render_line(y - int(ts.scroll_offset.y)))


def test_printable_escapes_controls_but_keeps_text():
    assert printable("[bold red]x[/]") == "[bold red]x[/]"
    assert printable("\x1b[31m") == "\\x1b[31m"
    assert printable("\x07\r") == "\\a\\r"
    assert printable("a\nb") == "a\nb" and printable("a\nb", keep_newlines=False) == "a\\nb"
    assert printable("\u202eevil") == "\\u202eevil"
    assert printable("\x9b") == "\\x9b"
    assert printable("\ud800") == "\\ud800"
    assert printable("héllo 世界 🙂") == "héllo 世界 🙂"
    assert token_label(" x") == "·x" and token_label("") == "∅"
    for h in HOSTILE:
        out = printable(h)
        assert not any(ord(c) < 32 and c != "\n" for c in out) and "\x1b" not in out and "\x9b" not in out


def _hostile_events():
    drafted = [DraftedToken(i, t, 0.9, 0.9, 0.5) for i, t in enumerate(HOSTILE[:4])]
    emitted = [EmittedToken(d.id, d.text, "draft") for d in drafted[:3]] + [EmittedToken(99, HOSTILE[4], "target")]
    step0 = StepEvent(step=0, method="gammatune+", params={}, gamma=4, drafted=drafted, accepted=3,
                      target_token=TargetToken(99, HOSTILE[4], "correction"), emitted=emitted, gamma_next=4,
                      draft_s=0.001, verify_s=0.002)
    rest = [EmittedToken(100 + i, t, "target") for i, t in enumerate(HOSTILE[5:])]
    step1 = StepEvent(step=1, method="gammatune+", params={}, gamma=1, drafted=[], accepted=0,
                      target_token=TargetToken(100, HOSTILE[5], "bonus"), emitted=rest, gamma_next=1,
                      draft_s=0.0, verify_s=0.002)
    header = SessionHeader(target="[red]t[/]", draft="\x1b[2Jd", tokenizer="x", device="cpu", dtype="float32",
                           method="gammatune+", gamma0=4, params={}, sampling={}, max_new_tokens=10,
                           prompt_ids=[1], prompt="[b]p\x1b[0m", prompt_pieces=["[b]p\x1b[0m"], user_text="[b]p\x1b[0m")
    summary = SessionSummary(tokens=9, steps=2, acceptance_rate=0.75, tokens_per_step=4.5, tokens_per_s=1.0,
                             stop_reason="eos")
    return [header, step0, step1, summary]


def test_hostile_tokens_render_literally_in_the_app(tmp_path):
    async def scenario():
        from pathlib import Path

        header, *steps, summary = _hostile_events()
        recording = Recording(Path("hostile.jsonl"), [RecordedSession(header, steps, summary)])
        app = make_replay_app(recording, speed=0, export_dir=tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.stats.summary is not None)
            ts = chat.transcript
            shown = "".join(_line_text(ts, y) for y in range(ts.line_count))
            for h in ("[bold red]x[/]", "\\x1b[31m", "\\a", "[link=http://evil]y[/link]", "\\u202eevil",
                      "<script>alert(1)</script>", "\\x9b2J", "[b]p\\x1b[0m", "\\x1b[2Jd", "[red]t[/]"):
                assert h in shown, h
            assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown and "\u202e" not in shown
            # no segment got a link or a style from the token text
            for y in range(ts.line_count):
                for seg in ts.render_line(y - int(ts.scroll_offset.y)):
                    assert seg.style is None or seg.style.link is None
            # the inspector shows them literally too
            chat.select_step(0)
            text = plain(chat.inspector)
            assert "[bold red]x[/]" in text and "\\x1b[31m" in text and "\\r" in text
            assert "\x1b" not in text and "\r" not in text
            html = ts.export_html()
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
            assert "\x1b" not in html and "\x07" not in html

    run(scenario())


def test_twenty_thousand_tokens_append_incrementally_and_follow_the_end():
    async def scenario():
        app = StreamApp()
        async with app.run_test(size=(100, 30)) as pilot:
            ts = app.query_one(TokenStream)
            pieces = ["tok", " en", "\n", "😀", "世界", " a", "b"]
            for i in range(20_000):
                ts.append(pieces[i % len(pieces)], ("draft", "target", "prompt")[i % 3], step=i // 3)
            await pilot.pause()
            assert ts.token_count == 20_000
            assert ts.steps == 20_000 // 3 + 1
            # wrapped to the widget's width and scrolled to the end
            width = ts.scrollable_content_region.width
            assert max(ts.wrapped.widths) <= width
            assert ts.scroll_offset.y == ts.max_scroll_y > 0
            assert _line_text(ts, ts.line_count - 1).rstrip().endswith(("ab", "a", "tok", "en", "😀", "世界", ""))
            # the user scrolls up: new tokens do not pull the view down
            ts.scroll_to(y=10, animate=False)
            await pilot.pause()
            ts.append("more", "draft", step=99999)
            await pilot.pause()
            assert ts.scroll_offset.y == 10
            # an append re-renders only the last lines (the cache keeps the rest)
            ts.scroll_end(animate=False)
            await pilot.pause()
            for y in range(ts.scrollable_content_region.height):
                ts.render_line(y)
            cached = set(ts._cache)
            ts.append("x", "draft", step=100000)
            assert cached - set(ts._cache) <= {ts.line_count - 1, ts.line_count - 2}
            # resizing re-wraps without losing tokens
            text_before = ts.plain_text()
            await pilot.resize_terminal(60, 30)
            await pilot.pause()
            assert ts.plain_text() == text_before and max(ts.wrapped.widths) <= ts.scrollable_content_region.width

    run(scenario())


def test_step_at_maps_cells_to_steps_and_truncate():
    async def scenario():
        app = StreamApp()
        async with app.run_test(size=(40, 10)) as pilot:
            ts = app.query_one(TokenStream)
            ts.append("ab", "prompt")
            ts.append("世界", "draft", step=0)
            ts.append("c", "target", step=1)
            await pilot.pause()
            assert ts.step_at(0, 0) is None          # prompt
            assert ts.step_at(2, 0) == 0 and ts.step_at(5, 0) == 0  # a wide glyph takes two cells
            assert ts.step_at(6, 0) == 1
            assert ts.step_at(7, 0) is None
            ts.truncate(2)
            assert ts.plain_text() == "ab世界" and ts.steps == 1

    run(scenario())


def test_inspector_draws_accepted_prefix_mismatch_and_discarded():
    drafted = [DraftedToken(1, "def", 0.9, 0.9, 0.95), DraftedToken(2, " foo", 0.8, 0.8, 0.6),
               DraftedToken(3, "(x", 0.5, 0.4, 0.1), DraftedToken(4, ")", 0.4, 0.33, float("nan"))]
    ev = StepEvent(step=5, method="gammatune", params={}, gamma=5, drafted=drafted, accepted=2,
                   target_token=TargetToken(9, "()", "correction"),
                   emitted=[EmittedToken(1, "def", "draft"), EmittedToken(2, " foo", "draft"),
                            EmittedToken(9, "()", "target")], gamma_next=3, draft_s=0.004, verify_s=0.011,
                   early_stop=True)
    text = plain(render_step(ev, index=5, total=9))
    assert "step 6/9" in text and "γ planned 5 · drafted 4 (stopped early) · accepted 2 + correction" in text
    assert "γ next 3" in text
    lines = text.splitlines()
    draft_line = next(ln for ln in lines if ln.startswith("draft"))
    target_line = next(ln for ln in lines if ln.startswith("target"))
    assert "def" in draft_line and "·foo" in draft_line and "(x" in draft_line
    assert target_line.count("✓") == 2 and "()" in target_line
    assert draft_line.index("(x") <= target_line.index("()") + 2        # correction under the mismatch
    q = next(ln for ln in lines if ln.startswith("q draft")).split()
    p = next(ln for ln in lines if ln.startswith("p target")).split()
    r = next(ln for ln in lines if ln.startswith("min(1,p/q)")).split()
    assert q[2:] == ["0.90", "0.80", "0.40", "0.33"]
    assert p[2:] == ["0.95", "0.60", "0.10", "–"]
    assert r[1:] == ["1.00", "0.75", "0.25", "–"]
    assert "first mismatch at position 2" in text and "1 later draft discarded" in text
    # struck-through styles: the mismatch and the discarded draft
    from rich.console import Console
    from io import StringIO
    console = Console(file=StringIO(), width=140, color_system="truecolor", force_terminal=True)
    console.print(render_step(ev))
    assert "\x1b[9m" in console.file.getvalue() or ";9m" in console.file.getvalue() or ";9;" in console.file.getvalue()
    # a fully accepted window ends with a bonus token after the drafts
    bonus = StepEvent(step=0, method="specdecode", params={}, gamma=2, drafted=drafted[:2], accepted=2,
                      target_token=TargetToken(7, "!", "bonus"),
                      emitted=[EmittedToken(1, "def", "draft"), EmittedToken(2, " foo", "draft"),
                               EmittedToken(7, "!", "target")], gamma_next=2, draft_s=0.0, verify_s=0.0)
    bt = plain(render_step(bonus))
    assert "all drafts accepted; bonus token !" in bt


def test_wrapped_lines_keep_their_ends_when_the_vertical_scrollbar_appears():
    """Issue 11 item 2: the wrap width must not outlive a scrollbar's arrival, and no horizontal scrollbar."""
    class Narrow(App):
        CSS = "TokenStream { width: 30; height: 6; }"

        def compose(self) -> ComposeResult:
            yield TokenStream(id="ts")

    async def scenario():
        app = Narrow()
        async with app.run_test(size=(60, 12)) as pilot:
            ts = app.query_one(TokenStream)
            ts.append("short line\n", "prompt")
            await pilot.pause()
            width_before = ts.scrollable_content_region.width
            word = "abcdefghij"
            for i in range(40):                                  # far more lines than fit: a scrollbar appears
                ts.append(f"{word}{i:02d} ", "draft", step=i)
            await pilot.pause(0.2)
            assert ts.show_vertical_scrollbar and not ts.show_horizontal_scrollbar
            assert ts.scrollable_content_region.width == width_before
            assert max(ts.wrapped.widths) <= ts.scrollable_content_region.width
            ts.scroll_to(y=0, animate=False)
            await pilot.pause()
            shown = "".join(_line_text(ts, y).strip() + " " for y in range(ts.scrollable_content_region.height))
            assert f"{word}00" in shown and f"{word}01" in shown         # whole tokens, none cut at the edge

    run(scenario())
