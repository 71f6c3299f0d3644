"""The chat screen's subtitle, fitted to the width, and the load's time by stage wherever it does not fit.

Once a pair has loaded, the subtitle names it, its runner and where the
load's time went ("… · static runner · loaded in 9.8 s: imports 4.1 ·
weights 2.0 · self-checks 2.9 · warm-up 0.8 s"). At 80 columns the header
cut that line before the stages. So where the whole line does not fit, the
subtitle keeps the pair and the total ("… · loaded in 9.8 s"), a notice
after loading gives the stages, and the palette's "Show load times" gives
them again at any time. Where even that is too long (SmolLM2's hub name at
80 columns), the sizes, the runner, the folders before the names and then
the start of the names give way: the names, the drafter's above all, and
the total stay.
"""

from __future__ import annotations

from ...render.safe_text import one_line
from ...session.pace import pace_label
from ...render.stop_words import STOP_WORDS

LOADED = " · loaded in "
HEADER_CHROME = 18
"""Columns of the header that the title line cannot use (the icon on the left, padding, the clock's room)."""


def split_load(title: str) -> tuple[str, str, str]:
    """(what was loaded, 'loaded in 9.8 s', the stages 'imports 4.1 · … s') from a subtitle; '' where absent."""
    name, sep, load = title.partition(LOADED)
    if not sep:
        return title, "", ""
    total, _, stages = load.partition(": ")
    return name, f"loaded in {total}", stages


def _without_sizes(models: str) -> str:
    """'a + b (float32, 30 MB + int4, 3.8 MB)' → 'a + b': the models' precisions and sizes left out."""
    if models.endswith(")") and " (" in models:
        return models[:models.rindex(" (")]
    return models


def _short_names(models: str) -> str:
    """'HuggingFaceTB/SmolLM2-135M-Instruct + self:int4' → 'SmolLM2-135M-Instruct + self:int4' (no folders)."""
    return " + ".join(part.rsplit("/", 1)[-1] if "/" in part and ":" not in part else part
                      for part in models.split(" + "))


def fit_subtitle(text: str, width: int, app_title: str = "gammatune") -> str:
    """`text` if the header shows it whole at `width`; else shortened so that the models' names and the
    load's total stay.

    Left out in this order until it fits: the load's stages (a notice and the
    palette give them), the models' precisions and sizes (`gammatune models`
    and the palette's load times say them), the last answer's tokens and stop
    reason (the statistics show them), the runner, the folders
    before the names (`HuggingFaceTB/`), then the start of the names (marked
    "…", so the drafter, named last, stays). The total ("loaded in 9.8 s") is
    never the part cut.
    """
    room = width - HEADER_CHROME - len(app_title) - 3
    if width <= 0 or len(text) <= room:
        return text
    name, total, stages = split_load(text)
    if not total:
        return text
    tail = stages.partition(" s · ")[2] if stages else ""   # what came after the stages (tokens, stop reason)
    models, sep, runner = name.rpartition(" · ")
    if not (sep and runner.endswith(" runner")):
        models, runner = name, ""
    ends = [f" · {total} · {tail}", f" · {total}"] if tail else [f" · {total}"]
    bare = _without_sizes(models)
    with_runner = f"{bare} · {runner}" if runner else bare
    short = _short_names(bare)
    for shown in (name + ends[0], with_runner + ends[0], with_runner + ends[-1], bare + ends[-1],
                  short + ends[-1]):
        if len(shown) <= room:
            return shown
    keep = room - len(ends[-1]) - 1
    return ("…" + short[-keep:] if keep >= 1 else "…") + ends[-1]


def with_models(title: str, models: str) -> str:
    """`title` naming `models` instead of the pair it was loaded with (a drafter switched since).

    The sizes go with the old names: the title names what runs, the palette's
    load times and `gammatune models` say the sizes.
    """
    name, sep, load = title.partition(LOADED)
    _, dot, runner = name.rpartition(" · ")
    runner = f" · {runner}" if dot and runner.endswith(" runner") else ""
    return f"{models}{runner}{sep}{load}"


class ChatSubtitle:
    """The subtitle kept whole (`set_subtitle`) and shown fitted; the load's stages as a notice when cut."""

    _subtitle_full: str | None = None
    _subtitle_shown: str | None = None
    running_models: tuple[str, str] | None = None   # (target, draft) of the last turn's header
    drafter_switched = False                         # a drafter was picked since the models loaded

    def set_subtitle(self, text: str) -> None:
        self._subtitle_full = one_line(text)
        self._fit_subtitle()

    def _fit_subtitle(self) -> None:
        self._subtitle_shown = fit_subtitle(self._subtitle_full or "", self.size.width or self.app.size.width,
                                            self.title)
        self.sub_title = self._subtitle_shown

    def _idle_subtitle(self) -> str:
        """The subtitle between turns: the source's title, and how the last answer ended."""
        s = self.stats.summary
        base = self.source_title()
        if s is None:
            return base
        return f"{base} · {s.tokens} tokens · {STOP_WORDS.get(s.stop_reason, s.stop_reason)}"

    def source_title(self) -> str:
        """The source's title, naming the drafter the last answer ran with where one was switched to."""
        title = one_line(self.source.title)
        if self.drafter_switched and self.running_models is not None:
            target, draft = (one_line(n) for n in self.running_models)
            models = split_load(title)[0].rpartition(" · ")[0] or title
            if f" + {draft}" not in f"{models} ":
                return with_models(title, f"{target} + {draft}")
        return title

    def show_pace(self) -> None:
        """The title: the app's name, and the pace (the screen's `pace`) while one holds a live source back."""
        pace = self.pace
        self.title = f"gammatune · pace {pace_label(pace)}" if pace else "gammatune"
        if self._subtitle_full is not None and self.sub_title == self._subtitle_shown:   # a longer title: refit
            self._fit_subtitle()

    def subtitle_is_cut(self) -> bool:
        """Whether the subtitle shown leaves out the load's stages."""
        return self._subtitle_full is not None and self._subtitle_shown != self._subtitle_full

    def on_resize(self) -> None:
        if self._subtitle_full is not None and self.sub_title == self._subtitle_shown:   # not "generating…"
            self._fit_subtitle()

    def load_times(self) -> str:
        """'loaded in 9.8 s: imports 4.1 · … s' from the source's title ('' when it names no stages)."""
        _, total, stages = split_load(one_line(self.source.title))
        return f"{total}: {stages}" if stages else total

    def action_show_load_times(self) -> None:
        text = self.load_times()
        self.notify(text or "No load times: this source loaded no models.", title="Load times", timeout=10)
