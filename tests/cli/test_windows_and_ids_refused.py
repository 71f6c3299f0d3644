"""Found by a newcomer's trial: windows past the budget, a 20-digit cache context and twice-used prompt ids.

Each is one line and exit status 2 before any model loads or is built: `bench --simulate --gammas
99999999999999999999` (and `--gamma-max`, `doctor --gammas`) recorded traces that deep and ran for ever;
`bench --latency --latency-context 99999999999999999999` built the models, then overflowed torch's sizes (a
traceback); a prompt set using one id twice replayed the second prompt on the first one's trace, silently.
"""

from __future__ import annotations

import pytest

from clihelpers import assert_one_line, invoke


@pytest.fixture(autouse=True)
def _no_models(monkeypatch):
    import importlib

    def never(*a, **k):
        raise AssertionError("loaded or built a model before refusing the input")

    mods = [importlib.import_module(f"gammatune_tui.{m}") for m in
            ("engine.loading.models", "bench.modes.sweep", "bench.doctor.examine")]
    for mod in mods:
        monkeypatch.setattr(mod, "load_pair", never)
    lat = importlib.import_module("gammatune_tui.bench.live.latency")
    monkeypatch.setattr(lat, "build_model", never)
    monkeypatch.setattr(lat, "measure", never)


TWENTY = "99999999999999999999"


@pytest.mark.parametrize("argv, words", [
    (["bench", "--simulate", "--gammas", TWENTY], ("--gammas", TWENTY, "--max-new-tokens (256)")),
    (["bench", "--simulate", "--gammas", "4,300"], ("--gammas", "300", "--max-new-tokens (256)")),
    (["bench", "--simulate", "--gamma-max", TWENTY], ("--gamma-max", TWENTY)),
    (["bench", "--gamma", "500"], ("500", "--max-new-tokens (256)")),
    (["doctor", "--gammas", TWENTY], ("--gammas", "--max-new-tokens (96)")),
    (["bench", "--latency", "--latency-context", TWENTY], ("--latency-context", "positions", "131,072")),
    (["bench", "--latency", "--shape", "vicuna-68m", "--latency-context", "2047", "--verify-k", "4"],
     ("needs 2,051 positions", "vicuna-68m", "2,048")),
])
def test_a_window_or_context_past_what_fits_is_one_line(argv, words, capsys):
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, *words)


def test_the_default_windows_still_run_with_a_short_budget(capsys, monkeypatch):
    """The default γ0 list reaches 24: with -n 8 its long windows never fill, and that is no error of the user's."""
    from gammatune_tui.bench.modes import sweep

    ran = []
    monkeypatch.setattr(sweep, "run_sweep", lambda *a, **k: ran.append(a[2].gammas))
    code, _, err = invoke(["bench", "--simulate", "-n", "8"], capsys)
    assert code in (0, None), err
    assert ran and max(ran[0]) > 8


@pytest.mark.parametrize("command", [["bench", "--simulate"], ["doctor"]])
def test_a_prompt_set_using_an_id_twice_is_refused(command, tmp_path, capsys):
    p = tmp_path / "mine.jsonl"
    p.write_text('{"id": "a", "turns": ["def f():"]}\n{"id": "b", "turns": ["x"]}\n{"id": "a", "turns": ["y"]}\n',
                 encoding="utf-8")
    code, _, err = invoke([*command, "--prompts", str(p)], capsys)
    assert_one_line(code, err, "line 3", "'a'", "line 1")
