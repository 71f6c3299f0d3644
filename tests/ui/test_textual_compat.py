"""Textual's private names and the driver patches, held to the supported Textual range (pyproject's bound).

A Textual release that moves a private widget, or stops building its stdin
decoder or terminal parser from the driver module's names, fails here:
then `ui/textual_compat.py` is the one file to change. And no other module
(package or tests) imports from `textual._…` or a private `textual` module.
"""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from textual import events
from textual.widget import Widget

from gammatune_tui.ui import textual_compat

ROOT = Path(__file__).resolve().parents[2]


def _textual_requirement() -> Requirement:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return next(Requirement(d) for d in deps if Requirement(d).name == "textual")


def test_the_installed_textual_is_in_the_supported_range():
    req = _textual_requirement()
    assert req.specifier, "pyproject must bound textual: textual_compat is checked against that range"
    assert req.specifier.contains(importlib.metadata.version("textual")), (req, importlib.metadata.version("textual"))


def test_every_private_name_is_still_where_textual_compat_takes_it_from():
    for name in ("FooterKey", "SelectOverlay", "Toast", "ToastRack"):
        cls = getattr(textual_compat, name)
        assert isinstance(cls, type) and issubclass(cls, Widget), name
    assert textual_compat.ToastRack.__module__.startswith("textual.")


def test_the_patches_reach_the_driver_and_do_their_job():
    from textual.drivers import linux_driver

    # the driver builds its decoder and parser from these module names when its input thread starts
    source = inspect.getsource(linux_driver.LinuxDriver)
    assert 'getincrementaldecoder("utf-8")' in source and "XTermParser(" in source
    textual_compat.patch_terminal_input()
    textual_compat.patch_terminal_input()   # once per process, however often apps are built
    assert linux_driver.getincrementaldecoder("utf-8")().decode(b"ab\xffcd") == "ab\ufffdcd"
    parser_class = linux_driver.XTermParser
    assert parser_class.paste_safe and not getattr(parser_class.__mro__[1], "paste_safe", False)
    got = list(linux_driver.XTermParser(False).feed('\x1b[200~x = "\x1b[31mRED"\x1b[201~'))
    assert [e.text for e in got if isinstance(e, events.Paste)] == ['x = "^[[31mRED"']
    assert not [e for e in got if isinstance(e, events.Key)]


def _private_textual_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names
                  if n.split(".")[0] == "textual" and any(p.startswith("_") for p in n.split(".")[1:])]
    return found


def test_no_private_textual_import_outside_textual_compat():
    files = [p for d in ("gammatune_tui", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    offenders = [hit for p in files if p.name != "textual_compat.py" for hit in _private_textual_imports(p)]
    assert offenders == []
    assert _private_textual_imports(ROOT / "gammatune_tui" / "ui" / "textual_compat.py")   # the check sees them
    assert not [p for p in files if re.search(r"linux_driver\.\w+\s*=", p.read_text(encoding="utf-8"))
                and p.name != "textual_compat.py"]


def test_the_one_overridden_private_method_is_still_textuals_and_draws_the_notes():
    """`AnnotatedSelect` overrides Select._setup_options_renderables: a Textual that renames it would silently drop
    the method selector's group names, so its presence is held here, and the notes are drawn."""
    import asyncio

    from textual.app import App
    from textual.widgets import Select

    assert callable(getattr(Select, "_setup_options_renderables", None))

    class Noted(textual_compat.AnnotatedSelect):
        def note(self, value):
            return f"note-{value}"

    class Host(App):
        def compose(self):
            yield Noted([("a", "a"), ("b", "b")], value="a", allow_blank=False)

    async def scenario():
        app = Host()
        async with app.run_test():
            overlay = app.query_one(textual_compat.SelectOverlay)
            rows = [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
            assert rows == ["a  note-a", "b  note-b"]

    asyncio.run(scenario())
