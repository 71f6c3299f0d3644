"""How options read in `--help`: no value shown after a flag, ranges folded into the type.

Typer (0.29) prints a type after every option, flags included: `--raw
<bool>` reads as if `--raw true` were the way to write it, and the parser
then refuses `true` as an extra argument. A named placeholder (`metavar`)
is shown in the same `<…>` style as the types (`--record <file>`). It also prints a range in a
column of its own (`<int range> [x>=1]`), which eats the width a help text
needs at 80 columns. `install()` changes those two renderings, once, for
every command: a flag shows no type, a ranged number shows `<int ≥1>`.
Parsing is untouched.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # typer loads with the CLI; its classes are patched in install()
    from typer import _click   # the click typer vendors, which its own signatures name
    from typer.core import TyperArgument, TyperOption

_INSTALLED = False


def _bound(v: float | int) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def range_label(type_name: str, lo: float | int | None, hi: float | int | None) -> str:
    """`<int ≥1>`, `<float ≤2>`, `<int 1–8>`: a number's type and range in one short label."""
    if lo is not None and hi is not None:
        return f"<{type_name} {_bound(lo)}–{_bound(hi)}>"
    if lo is not None:
        return f"<{type_name} ≥{_bound(lo)}>"
    if hi is not None:
        return f"<{type_name} ≤{_bound(hi)}>"
    return f"<{type_name}>"


def reflow(doc: str) -> str:
    """A command's docstring as `--help` paragraphs: the lines of one paragraph joined, so the terminal wraps them.

    Typer's rich mode keeps a docstring's line breaks, and the source wraps
    at ~110 columns: at 100 columns every source line then broke twice
    ("the peers'" alone on a line). A line that starts indented or as a list
    item ("- ", "* ") keeps its break.
    """
    out: list[str] = []
    for line in inspect.cleandoc(doc).splitlines():
        item = line[:1].isspace() or line.lstrip().startswith(("- ", "* "))
        if out and out[-1].strip() and line.strip() and not item:
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)


def install() -> None:
    """Patch typer's option rendering (idempotent; does nothing when typer's internals are not as expected)."""
    global _INSTALLED
    if _INSTALLED:
        return
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - another typer layout: leave its help as it is
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or not hasattr(TyperOption, "_get_number_range_help_str"):  # pragma: no cover
        return

    def display_type_rich(self: TyperOption, ctx: _click.Context) -> str | None:
        if getattr(self, "is_flag", False):
            return None   # a flag takes no value
        if self.metavar:   # one style for every placeholder: <file>, <model>, <list>, like <int> and <str>
            return f"<{self.metavar.strip('<>').lower()}>"
        desc = getattr(self, "type_descriptor", None)
        if self.metavar is None and desc is not None and getattr(desc, "is_ranged", False):
            return range_label(getattr(desc, "ranged_type_name", "number"), self.min, self.max)
        return original(self, ctx)

    def no_range_column(self: TyperOption) -> None:
        return None   # the range is in the type label

    def argument_type_rich(self: TyperArgument, ctx: _click.Context) -> str | None:
        if self.metavar:   # FILE... → <file>...; PROMPT → <prompt>
            name = self.metavar.strip("[]<>")
            dots = "..." if name.endswith("...") else ""
            return f"<{name.rstrip('.').lower()}>{dots}"
        return original_argument(self, ctx)

    original_argument = TyperArgument.display_type_rich
    # typer's help renderer, patched at the class (setattr: mypy refuses an assignment to a method)
    setattr(TyperArgument, "display_type_rich", argument_type_rich)
    setattr(TyperOption, "display_type_rich", display_type_rich)
    setattr(TyperOption, "_get_number_range_help_str", no_range_column)
    _INSTALLED = True


__all__ = ["install", "range_label"]
