"""The subtitle and the turn headings name the models that run: a switched drafter too, and at 80 columns."""

from __future__ import annotations

import dataclasses

from gammatune_tui.engine.events import SessionHeader
from gammatune_tui.ui.screens.chat_subtitle import fit_subtitle

from uihelpers import SyntheticSource, make_app, run, wait_until

TITLE = ("synthetic-target + self:int4 (float32, 538 MB + int4 g32, +84 MB) · static runner · "
         "loaded in 1.7 s: imports 1.0 · weights 0.7 s")


class SwitchingSource(SyntheticSource):
    """Names its drafter in each turn's header, as the live source does; `set_drafter` switches it for the next."""

    def __init__(self, **kw) -> None:
        super().__init__(steps=3, title=TITLE, **kw)
        self.drafter, self._next = "self:int4", None

    def set_drafter(self, name: str) -> None:
        self._next = name

    def events(self, prompt=None):
        if self._next:
            self.drafter, self._next = self._next, None
        for ev in super().events(prompt):
            yield dataclasses.replace(ev, draft=self.drafter) if isinstance(ev, SessionHeader) else ev


async def _answer(pilot, chat, text: str, turns: int) -> None:
    await pilot.press(*text, "enter")
    await wait_until(pilot, lambda: len(chat.sessions) == turns and not chat.generating, what=f"turn {turns}")
    await pilot.pause()


def test_a_switched_drafter_is_named_by_the_subtitle_and_every_later_heading():
    async def scenario():
        app = make_app(SwitchingSource())
        async with app.run_test(size=(200, 50)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="loaded")
            await _answer(pilot, chat, "a", 1)
            assert chat.sub_title.startswith("synthetic-target + self:int4 (float32, 538 MB")
            chat.set_drafter("self:int8")
            await _answer(pilot, chat, "b", 2)
            assert chat.sub_title.startswith("synthetic-target + self:int8 · static runner · loaded in 1.7 s")
            assert "self:int4" not in chat.sub_title
            await _answer(pilot, chat, "c", 3)
            text = chat.transcript.plain_text()
            assert "── turn 2 · gammatune+ γ0=4 · synthetic-target + self:int8 ──" in text
            assert "── turn 3 · gammatune+ γ0=4 · synthetic-target + self:int8 ──" in text
            assert "self:int8" in chat.sub_title

    run(scenario())


def test_at_80_columns_the_sizes_give_way_before_the_names():
    demo = "demo pair (float32, 30 MB + float32, 3.8 MB) · static runner · loaded in 1.7 s: imports 1.0 · weights 0.7 s"
    assert fit_subtitle(demo, 80) == "demo pair · static runner · loaded in 1.7 s"
    smol = ("HuggingFaceTB/SmolLM2-135M-Instruct + self:int4 (float32, 538 MB + int4 g32, +84 MB) · static runner · "
            "loaded in 12.7 s: imports 0.9 · weights 0.2 s")
    assert fit_subtitle(smol, 80) == "…lLM2-135M-Instruct + self:int4 · loaded in 12.7 s"   # the drafter stays
    assert fit_subtitle(smol, 120) == "HuggingFaceTB/SmolLM2-135M-Instruct + self:int4 · static runner · loaded in 12.7 s"
    gguf = ("SmolLM2-135M-Instruct (Q4_1 GGUF) + self:int4 (float32, 538 MB + int4 g32, +84 MB) · static runner · "
            "loaded in 67.8 s: imports 0.9 · conversion 58.6 s")
    assert fit_subtitle(gguf, 120) == "SmolLM2-135M-Instruct (Q4_1 GGUF) + self:int4 · static runner · loaded in 67.8 s"
    # a head's words are not a path: "layers 0/2" once came out as the head "2"
    head = ("/tmp/lt3 + dflash, block 4, layers 0/2 (float32, 141 kB + …) · eager runner · loaded in 2.1 s: "
            "imports 0.3 · weights 0.8 s")
    assert fit_subtitle(head, 80).endswith("+ dflash, block 4, layers 0/2 · loaded in 2.1 s")   # the head stays whole
    # where cutting the start of the names would reach the head, its details give way first ("…ssistant, 2 layers,
    # 4 centroids" once lost the head's own name at 80 columns)
    assistant = ("/tmp/g4user/gemma-4-tiny + Gemma 4 assistant, 2 layers, 4 centroids (float32, 651 kB in memory) · "
                 "eager runner · loaded in 1.4 s: imports 0.2 · tokenizer 0.5 · weights 0.6 s")
    assert fit_subtitle(assistant, 80) == "gemma-4-tiny + Gemma 4 assistant · loaded in 1.4 s"
    assert fit_subtitle(assistant, 100) == "…a-4-tiny + Gemma 4 assistant, 2 layers, 4 centroids · loaded in 1.4 s"


def test_the_palettes_drafter_entries_say_the_self_draft_note_only_for_self_drafts():
    """Every "Drafter:" entry said "(a self-draft is built from the target first)" (issue 40 row 12f)."""
    async def scenario():
        app = make_app(SwitchingSource())
        async with app.run_test(size=(120, 36)) as pilot:
            chat = app.main_screen
            await wait_until(pilot, lambda: chat.ready, what="loaded")
            entries = {c.title.removeprefix("Drafter: "): c.help for c in chat.system_commands()
                       if c.title.startswith("Drafter: ")}
            assert set(entries) >= {"model", "self:int8", "self:int4", "prompt-lookup", "ngram-pool"}
            for name, words in entries.items():
                assert ("self-draft" in words) == name.startswith("self:"), (name, words)
            assert "int4" in entries["self:int4"] and "draft model" in entries["model"]
            assert "no draft model" in entries["prompt-lookup"] and "every earlier turn" in entries["ngram-pool"]

    run(scenario())
