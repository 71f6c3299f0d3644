"""Theme files: shipped ones, the user folder, and refusing bad files with a reason."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.ui.app import make_app
from gammatune_tui.session.synthetic import SyntheticSource
from gammatune_tui.ui.themes import ROLES, ThemeError, load_themes, parse_theme, user_themes_dir

from uihelpers import SIZE, run


def test_shipped_themes_have_the_three_roles():
    themes, warnings = load_themes()
    assert {"paper", "okabe-ito", "high-contrast", "light"} <= set(themes)
    assert warnings == []
    for t in themes.values():
        assert set(t.roles) == set(ROLES)
        assert len({t.roles[r].color.lower() for r in ROLES}) == 3, t.name   # three distinct hues
        assert t.textual.variables["token-draft"] == t.roles["draft"].color
    assert themes["light"].textual.dark is False
    assert themes["okabe-ito"].roles["target"].underline          # a cue that is not only colour


def test_user_theme_dir_adds_and_overrides(tmp_path, monkeypatch):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "solar.json").write_text(json.dumps({
        "name": "solar", "colors": {"primary": "#268bd2", "background": "#002b36"},
        "tokens": {"prompt": "#268bd2", "draft": "#859900", "target": "bold #dc322f"}}))
    (d / "broken.json").write_text("{not json")
    (d / "evil.json").write_text(json.dumps({"name": "evil", "colors": {"primary": "red; rm -rf"},
                                             "tokens": {"prompt": "red", "draft": "green", "target": "blue"}}))
    monkeypatch.setenv("GAMMATUNE_THEMES", str(d))
    assert user_themes_dir() == d
    themes, warnings = load_themes()
    assert "solar" in themes and themes["solar"].roles["target"].bold
    assert "evil" not in themes and "broken" not in themes
    assert any("broken.json" in w and "not valid JSON" in w for w in warnings)
    assert any("evil.json" in w and "not a colour" in w for w in warnings)

    async def scenario():
        app = make_app(SyntheticSource(steps=1), theme="solar")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.theme == "solar"
            assert app.main_screen.transcript._roles["draft"].color.lower() == "#859900"

    run(scenario())


@pytest.mark.parametrize("data, reason", [
    ({"name": "x", "colors": {"primary": "#fff"}, "tokens": {"prompt": "#fff", "draft": "#0f0"}}, "exactly prompt"),
    ({"name": "X Y", "colors": {"primary": "#fff"}, "tokens": {}}, "'name'"),
    ({"name": "x", "colors": {"primary": "#fff", "sparkle": "#fff"},
      "tokens": {"prompt": "#fff", "draft": "#0f0", "target": "#f00"}}, "unknown colour"),
    ({"name": "x", "colors": {"primary": "#fff"},
      "tokens": {"prompt": "#fff", "draft": "blink #0f0", "target": "#f00"}}, "unknown modifier"),
    ([], "JSON object"),
])
def test_bad_theme_is_refused_with_a_reason(data, reason):
    with pytest.raises(ThemeError, match=reason.replace("(", r"\(")):
        parse_theme(data)


def test_unknown_theme_name_is_a_one_line_error():
    with pytest.raises(ThemeError, match="unknown theme 'nope'; available: .*paper"):
        make_app(SyntheticSource(), theme="nope")


@pytest.mark.parametrize("kind", ["file", "missing"])
def test_a_themes_variable_that_is_no_folder_is_said(kind, tmp_path, monkeypatch):
    """Issue 40 row 11: GAMMATUNE_THEMES pointing at a file or a missing folder was silently ignored."""
    target = tmp_path / "themes.json"
    if kind == "file":
        target.write_text("{}")
    monkeypatch.setenv("GAMMATUNE_THEMES", str(target))
    themes, warnings = load_themes()
    assert "paper" in themes   # the app goes on with the shipped themes
    assert len(warnings) == 1 and "GAMMATUNE_THEMES" in warnings[0]
    assert ("is a file" if kind == "file" else "does not exist") in warnings[0]
