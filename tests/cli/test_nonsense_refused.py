"""Values the parser alone would accept but that mean nothing: one line and exit status 2 each, before any work."""

from __future__ import annotations

import pytest

from clihelpers import assert_one_line, invoke


@pytest.fixture(autouse=True)
def _no_models(monkeypatch):
    """Every case here must be refused before a model loads (a refusal after minutes of work is the fault)."""
    import importlib

    def never(*a, **k):
        raise AssertionError("loaded a model before refusing the input")

    # every module imported before any is patched: one imported under the patch would keep `never` for good
    mods = [importlib.import_module(f"gammatune_tui.{m}") for m in
            ("engine.loading.models", "bench.modes.sweep", "bench.doctor.examine", "session.compare_job")]
    for mod in mods:
        monkeypatch.setattr(mod, "load_pair", never)


@pytest.mark.parametrize("argv, words", [
    (["compare", "--print", "--repeats", "1000000000"], ("--repeats", "100")),
    (["bench", "--repeats", "1000000000"], ("--repeats",)),
    (["compare", "--print", "--methods", ""], ("--methods", "empty")),
    (["bench", "--simulate", "--methods", " "], ("--methods", "empty")),
    (["compare", "--print", "--theme", "nope"], ("nope",)),
    (["replay", "all-methods", "--print", "--theme", "nope"], ("nope",)),
])
def test_nonsense_flags_areassert_one_line(argv, words, capsys):
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, *words)


@pytest.mark.parametrize("name, value", [("GAMMATUNE_ATTENTION", "bogus"), ("GAMMATUNE_COMPILE", "maybe"),
                                         ("GAMMATUNE_PACKED_VERIFY", "maybe")])
@pytest.mark.parametrize("argv", [["run", "x", "-n", "2"], ["doctor"]])
def test_a_bad_engine_variable_isassert_one_line(name, value, argv, capsys, monkeypatch):
    monkeypatch.setenv(name, value)
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, name, value)


def test_a_broken_user_theme_is_named_with_its_fault(tmp_path, capsys, monkeypatch):
    (tmp_path / "mine.json").write_text('{"name": "mine", "colors": {}}')
    monkeypatch.setenv("GAMMATUNE_THEMES", str(tmp_path))
    code, _, err = invoke(["replay", "all-methods", "--print", "--theme", "mine"], capsys)
    assert_one_line(code, err, "mine.json", "primary")
