"""Every main screen is a `GammaScreen`: the app calls its hooks (help keys, early keys, palette) and probes nothing."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

from textual.screen import ModalScreen, Screen

from gammatune_tui.session.compare import MethodRun
from gammatune_tui.session.synthetic import synthetic_session
from gammatune_tui.ui import screens
from gammatune_tui.ui.app import make_compare_replay_app
from gammatune_tui.ui.screens.base import GammaScreen
from gammatune_tui.ui.screens.chat import ChatScreen
from gammatune_tui.ui.screens.compare import CompareScreen
from gammatune_tui.ui.screens.replay import ReplayChatScreen
from gammatune_tui.ui.screens.help import HelpScreen

from uihelpers import SyntheticSource, make_app, plain, run, wait_until

APP = Path(__file__).resolve().parents[2] / "gammatune_tui" / "ui" / "app.py"


def test_every_screen_subclasses_the_base_and_the_app_probes_none():
    for info in pkgutil.iter_modules(screens.__path__):
        module = importlib.import_module(f"{screens.__name__}.{info.name}")
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, Screen) and cls.__module__ == module.__name__ and cls is not GammaScreen
                    and not issubclass(cls, ModalScreen)):
                assert issubclass(cls, GammaScreen), cls
    for cls in (ChatScreen, ReplayChatScreen, CompareScreen):   # the screens the app's factories show
        assert cls.HELP_KEYS and cls.HELP_TITLE, cls
    probes = [node.lineno for node in ast.walk(ast.parse(APP.read_text(encoding="utf-8")))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr")]
    assert probes == [], f"ui/app.py probes with getattr/hasattr at lines {probes}"


def _compare_app():
    runs = [MethodRun.from_events(synthetic_session(m, seed=5)) for m in ("gammatune", "specdecode")]
    return make_compare_replay_app(runs, speed=0)


def test_the_hooks_serve_help_early_keys_and_the_palette():
    async def go():
        app = _compare_app()
        compare = app.main_screen
        assert not compare.takes_early_keys and app._early_keys is None   # no prompt to keep keys for
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: compare.summary is not None, what="the race's end")
            assert "Race again" in [c.title for c in app.get_system_commands(compare)]
            app.action_help()
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
            await pilot.pause(0.2)
            return plain(app.screen.query_one("#help-text"), width=110)

    text = run(go())
    assert "gammatune compare: keys" in text and "race again" in text
    chat = make_app(SyntheticSource(steps=2))
    assert chat.main_screen.takes_early_keys and chat._early_keys == []   # typing while it mounts goes to the prompt
