"""The chat screen's subtitle, fitted to the width, and the load's time by stage wherever it does not fit.

`Subtitle` is its declared state (the screen holds one); the functions here
fit and word it, without Textual.

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

from dataclasses import dataclass

from ...engine.events import SessionSummary
from ...render.safe_text import one_line
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
    """'HuggingFaceTB/SmolLM2-135M-Instruct + self:int4' → 'SmolLM2-135M-Instruct + self:int4' (no folders). A
    head's words are not a path ('dflash, block 16, layers 1/7/13' kept whole: its last "/" is no folder)."""
    return " + ".join(part.rsplit("/", 1)[-1] if "/" in part and ":" not in part and " " not in part else part
                      for part in models.split(" + "))


def _fewer_head_words(models: str) -> list[str]:
    """'t + Gemma 4 assistant, 2 layers, 4 centroids' → ['t + Gemma 4 assistant, 2 layers', 't + Gemma 4
    assistant']: a head's details give way, last first, before its name is cut."""
    head, sep, words = models.rpartition(" + ")
    parts = words.split(", ")
    return [f"{head}{sep}{', '.join(parts[:n])}" for n in range(len(parts) - 1, 0, -1)]


def fit_subtitle(text: str, width: int, app_title: str = "gammatune") -> str:
    """`text` if the header shows it whole at `width`; else shortened so that the models' names and the
    load's total stay.

    Left out in this order until it fits: the load's stages (a notice and the
    palette give them), the models' precisions and sizes (`gammatune models`
    and the palette's load times say them), the last answer's tokens and stop
    reason (the statistics show them), the runner, the folders
    before the names (`HuggingFaceTB/`), a head's details after its name
    ("…, 2 layers, 4 centroids"), then the start of the names (marked "…", so
    the drafter, named last, stays). The total ("loaded in 9.8 s") is never
    the part cut.
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
    if keep < len(short.rpartition(" + ")[2]) + 3:   # the cut would reach the drafter: its details go first
        for fewer in _fewer_head_words(short):
            if len(fewer + ends[-1]) <= room:
                return fewer + ends[-1]
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


@dataclass
class Subtitle:
    """The chat's subtitle as declared state: the whole text, the text shown, and what names the models.

    The screen sets `sub_title` to what `fit` returns (the header draws it);
    `shown` tells a subtitle it set from one it wrote by hand meanwhile
    ("generating…"), which a resize must leave alone.
    """

    full: str | None = None
    """The whole subtitle last set (None before the first)."""
    shown: str | None = None
    """What was last shown of it, fitted to the width."""
    running_models: tuple[str, str] | None = None
    """(target, draft) of the last turn's header."""
    drafter_switched: bool = False
    """A drafter was picked since the models loaded: the subtitle names the one each answer ran with."""

    def fit(self, width: int, app_title: str) -> str:
        """The whole subtitle fitted to `width` (kept as `shown`)."""
        self.shown = fit_subtitle(self.full or "", width, app_title)
        return self.shown

    def showing(self, sub_title: str) -> bool:
        """Whether the header shows the fitted subtitle (not a word set meanwhile, such as "generating…")."""
        return self.full is not None and sub_title == self.shown

    @property
    def is_cut(self) -> bool:
        """Whether the subtitle shown leaves out the load's stages."""
        return self.full is not None and self.shown != self.full

    def source_title(self, title: str) -> str:
        """The source's `title`, naming the drafter the last answer ran with where one was switched to."""
        title = one_line(title)
        if self.drafter_switched and self.running_models is not None:
            target, draft = (one_line(n) for n in self.running_models)
            models = split_load(title)[0].rpartition(" · ")[0] or title
            if f" + {draft}" not in f"{models} ":
                return with_models(title, f"{target} + {draft}")
        return title


def idle_subtitle(title: str, summary: SessionSummary | None) -> str:
    """The subtitle between turns: the source's title, and how the last answer ended."""
    if summary is None:
        return title
    return f"{title} · {summary.tokens} tokens · {STOP_WORDS.get(summary.stop_reason, summary.stop_reason)}"


def load_times(title: str) -> str:
    """'loaded in 9.8 s: imports 4.1 · … s' from a source's title ('' when it names no stages)."""
    _, total, stages = split_load(one_line(title))
    return f"{total}: {stages}" if stages else total
