"""A standalone HTML page of Rich renderables: the app's F3 export (transcript, legend, statistics, settings).

Rich records what it prints and writes it as HTML with inline styles; every
piece of text is HTML-escaped by Rich, so a token holding `<script>` is shown,
never run. The page keeps the theme's background and foreground.
"""

from __future__ import annotations

from html import escape
from io import StringIO
from typing import Iterable

from rich.console import Console, RenderableType
from rich.text import Text


def html_page(parts: Iterable[RenderableType], *, width: int, background: str, foreground: str,
              title: str = "gammatune transcript") -> str:
    """`parts` printed one after the other at `width` columns, as one HTML document."""
    console = Console(record=True, file=StringIO(), width=max(40, width), color_system="truecolor",
                      force_terminal=True, legacy_windows=False, highlight=False, markup=False, emoji=False)
    for part in parts:   # text keeps its own lines (the page wraps it); tables are laid out at `width`
        console.print(part, soft_wrap=isinstance(part, Text), crop=False)
    return console.export_html(inline_styles=True, theme=None, code_format=_page(background, foreground, title))


def _page(bg: str, fg: str, title: str) -> str:
    title = escape(title).replace("{", "{{").replace("}", "}}")
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n"
        f"<title>{title}</title>\n"
        "<style>\n{stylesheet}\nbody {{ color: " + fg + "; background-color: " + bg + "; }}\n</style>\n"
        "</head>\n<body>\n    <pre style=\"font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace;"
        "white-space:pre-wrap\"><code style=\"font-family:inherit\">{code}</code></pre>\n</body>\n</html>\n"
    )


__all__ = ["html_page"]
